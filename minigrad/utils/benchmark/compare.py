"""``torch.utils.benchmark.Compare``: many Measurements as text tables, in PyTorch's layout. Replicates (same
``TaskSpec``) are merged first; then one table per ``label``, in blocks per ``num_threads`` ("1 threads: ---"),
rows by ``sub_label`` (else the statement), columns by ``description``; each cell is the median in the table's
unit (chosen from its fastest result). Options: ``trim_significant_figures()``, ``colorize(rowwise=False)`` (ANSI
colours relative to the best of the column or row), ``highlight_warnings()`` ("(! XX%)" after noisy cells)."""
import collections
import enum
import math

import numpy as np

from .measurement import Measurement, ordered_unique, select_unit, trim_sigfig, unit_to_english

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"

_SEPARATOR = "  |  "


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _paint(text, value, best):
    """``text`` coloured by how ``value`` compares with ``best`` (PyTorch's thresholds: within 1% or 100 ns is
    best, within 10% good, twice as slow bad, five times very bad)."""
    if value <= best * 1.01 or value <= best + 100e-9:
        style = BEST + BOLD
    elif value <= best * 1.1:
        style = GOOD + BOLD
    elif value >= best * 5:
        style = VERY_BAD + BOLD
    elif value >= best * 2:
        style = BAD
    else:
        return text
    return style + text + TERMINATE * 2


class _CellFormat:
    """How one column's numbers are printed: a common width and number of decimals, from the largest value's
    integer digits and (when trimming) the fewest decimals any entry's significant figures allow."""

    def __init__(self, entries, scale, trim, highlight):
        present = [m for m in entries if m is not None]
        digits = [math.ceil(float(np.log10(np.float32(m.median / scale)))) for m in present]
        if trim:
            decimals = min(max(m.significant_figures - d, 0) for m, d in zip(present, digits))
        else:
            decimals = 1
        self.width = max(digits) + decimals + (1 if decimals else 0)
        self.decimals = decimals
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in present)

    def render(self, value, figures, spread):
        if value is None:
            return " " * len(self.render(1, figures, None))
        if self.trim:
            value = trim_sigfig(value, figures)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return f"{value:>{self.width}.{self.decimals}f}" + note.rjust(7 if self.highlight else 0)


class _Table:
    """One label's results as text."""

    def __init__(self, results, colorize, trim, highlight):
        if len({m.label for m in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results, self.colorize, self.highlight = results, colorize, highlight
        self.label = results[0].label
        self.unit, self.scale = select_unit(min(m.median for m in results))

        row_keys = ordered_unique((m.num_threads, m.env, m.as_row_name) for m in results)
        # blocks by thread count, then env; first-seen order otherwise (a missing env sorts first)
        row_keys.sort(key=lambda key: (key[0], key[1] is not None, key[1] or ""))
        self.row_keys = row_keys
        self.col_keys = ordered_unique(m.description for m in results)
        where_row = {key: i for i, key in enumerate(row_keys)}
        where_col = {key: j for j, key in enumerate(self.col_keys)}
        self.cells = [[None] * len(self.col_keys) for _ in row_keys]
        for m in results:
            self.cells[where_row[(m.num_threads, m.env, m.as_row_name)]][where_col[m.description]] = m

        # rows starting a thread block; block index of every row
        self.block_of, starts, block = [], set(), -1
        for i, (threads, _, _) in enumerate(row_keys):
            if i == 0 or threads != row_keys[i - 1][0]:
                block += 1
                starts.add(i)
            self.block_of.append(block)
        self.block_starts = starts
        self.formats = [_CellFormat([row[j] for row in self.cells], self.scale, trim, highlight)
                        for j in range(len(self.col_keys))]

    def _row_name(self, i, envs):
        threads, env, name = self.row_keys[i]
        shown = ""
        if len(envs) > 1:
            previous = "" if i in self.block_starts else self.row_keys[i - 1][1]
            if env != previous:
                shown = f"({env})"
        width = max(len(str(e)) for e in envs) if len(envs) > 1 else 0
        return "  " + shown.ljust(width + 4) + name

    def _best(self, i, j):
        if self.colorize == Colorize.ROWWISE:
            return min(m.median for m in self.cells[i] if m is not None)
        same_block = [self.cells[k][j] for k in range(len(self.cells)) if self.block_of[k] == self.block_of[i]]
        medians = [m.median for m in same_block if m is not None]
        return min(medians) if medians else None

    def render(self):
        envs = {m.env for m in self.results}
        header = [""] + ["" if key is None else str(key) for key in self.col_keys]
        lines = []
        for i, row in enumerate(self.cells):
            cells = [fmt.render(None, 1, None) if m is None else
                     fmt.render(m.median / self.scale, m.significant_figures,
                                m.iqr / m.median if m.has_warnings else None)
                     for m, fmt in zip(row, self.formats)]
            lines.append([self._row_name(i, envs)] + cells)
        widths = [max(len(r[k]) for r in [header] + lines) for k in range(len(header))]
        top = _SEPARATOR.join(text.center(w) for text, w in zip(header, widths))
        out = [top]
        for i, texts in enumerate(lines):
            if i in self.block_starts:
                out.append(f"{self.row_keys[i][0]} threads: ".ljust(len(top), "-"))
            parts = [texts[0].ljust(widths[0])]
            for j, (text, w) in enumerate(zip(texts[1:], widths[1:])):
                text = text.center(w)
                m = self.cells[i][j]
                if self.colorize != Colorize.NONE and m is not None:
                    best = self._best(i, j)
                    if best is not None:
                        text = _paint(text, m.median, best)
                parts.append(text)
            out.append(_SEPARATOR.join(parts))
        title = f" {self.label or ''} ".center(len(top) - 2, "-")
        text = (f"[{title}]\n" + "\n".join(out) + "\n\n"
                f"Times are in {unit_to_english(self.unit)}s ({self.unit}).\n")
        if self.highlight and any(m.has_warnings for m in self.results):
            text += "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
        return text


class Compare:
    """Tables of Measurements, printed with ``print()`` or ``str()``. See the module's docstring for the
    layout."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def extend_results(self, results):
        """Add more Measurements (each must be one)."""
        results = list(results)
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """Print each cell with only the digits its significant figures support."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        """Colour cells relative to the best of their column within a thread block (or, ``rowwise``, of their
        row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """Mark noisy cells with "(! XX%)", XX being IQR / median in percent."""
        self._highlight_warnings = True

    def _render(self):
        by_label = collections.defaultdict(list)
        for m in Measurement.merge(self._results):
            by_label[m.label].append(m)
        return [_Table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
                for group in by_label.values()]

    def __str__(self):
        return "\n".join(self._render())

    def print(self):
        """Print the tables."""
        print(str(self))
