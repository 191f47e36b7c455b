"""The text table of ``key_averages().table()``: one row per event (or per name, averaged), in PyTorch's columns.

    Name | Self CPU % | Self CPU | CPU total % | CPU total | CPU time avg | [CPU Mem | Self CPU Mem] | # of Calls
         | [Input Shapes] | [Total FLOPs] | [Source Location]

The flops column (``with_flops``, when some event has flops) is in the unit of the smallest positive count among the
events (FLOPs, KFLOPs, MFLOPs, ... as PyTorch scales it), "--" where an event has none.

Percentages are of the summed self times (the time covered by the outermost ranges), shown under the table.
"""
import math

SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "count", "cpu_memory_usage",
             "self_cpu_memory_usage", "device_time", "device_time_total", "self_device_time_total", "cuda_time",
             "cuda_time_total", "self_cuda_time_total", "device_memory_usage", "self_device_memory_usage",
             "cuda_memory_usage", "self_cuda_memory_usage", "flops")

_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}


def format_time(us, unit=None):
    """Microseconds as PyTorch shows them: "1.234s", "12.345ms" or "123.456us" (or in the given ``unit``)."""
    if unit is None:
        unit = "s" if abs(us) >= 1e6 else "ms" if abs(us) >= 1e3 else "us"
    return f"{us / _UNITS[unit]:.3f}{unit}"


def format_memory(nbytes):
    """Bytes as "1.50 Gb"-style text: B, KB, MB or GB with two decimals."""
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{int(nbytes)} B"


_FLOP_UNITS = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")


def _flops_unit(smallest):
    """(scale, unit) of the flops column: the unit of ``smallest`` (the smallest positive count), in steps of 1000."""
    power = min(int(math.log10(smallest) // 3), len(_FLOP_UNITS) - 1)
    return 10.0 ** (-3 * power), _FLOP_UNITS[power]


def _percent(part, whole):
    return f"{100.0 * part / whole:.2f}%" if whole else "0.00%"


def _clip(text, width):
    return text if len(text) <= width else text[:max(width - 3, 0)] + "..."


def build_table(events, sort_by=None, row_limit=100, header=None, max_src_column_width=75, max_name_column_width=55,
                max_shapes_column_width=80, top_level_events_only=False, time_unit=None, with_shapes=False,
                with_memory=False, with_stack=False, with_flops=False):
    if time_unit is not None and time_unit not in _UNITS:
        raise ValueError(f"time_unit must be one of 's', 'ms', 'us' (or None), got {time_unit!r}")
    rows = list(events)
    if sort_by is not None:
        if rows and not hasattr(rows[0], sort_by):
            raise AttributeError(f"'{type(rows[0]).__name__}' object has no attribute '{sort_by}': sort_by must name "
                                 f"an event attribute, such as {', '.join(SORT_KEYS[:6])}")
        rows.sort(key=lambda event: getattr(event, sort_by), reverse=True)
    if top_level_events_only:
        rows = [event for event in rows if event.cpu_parent is None]
    if row_limit is not None and row_limit >= 0:
        rows = rows[:row_limit]
    total_self = sum(event.self_cpu_time_total for event in events)

    columns = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if with_memory:
        columns += ["CPU Mem", "Self CPU Mem"]
    columns.append("# of Calls")
    name_width = min(max([len(event.key) for event in rows] + [len("Name")]) + 4, max_name_column_width)
    widths = [name_width] + [12] * len(columns)
    titles = ["Name"] + columns
    if with_shapes:
        titles.append("Input Shapes")
        widths.append(min(max([len(str(e.input_shapes)) for e in rows] + [12]) + 2, max_shapes_column_width))
    positive = [event.flops for event in events if event.flops > 0]
    with_flops = with_flops and bool(positive)
    if with_flops:
        flops_scale, flops_unit = _flops_unit(min(positive))
        titles.append(f"Total {flops_unit}")
        widths.append(12)
    if with_stack:
        titles.append("Source Location")
        widths.append(min(max([len(e.stack[0]) for e in rows if e.stack] + [15]) + 2, max_src_column_width))

    def line(cells):
        return "  ".join(cell.rjust(width) for cell, width in zip(cells, widths)) + "  "

    rule = "  ".join("-" * width for width in widths) + "  "
    out = []
    if header:
        out += ["=" * len(rule), header]
    out += [rule, line(titles), rule]
    for event in rows:
        cells = [_clip(event.key, name_width),
                 _percent(event.self_cpu_time_total, total_self), format_time(event.self_cpu_time_total, time_unit),
                 _percent(event.cpu_time_total, total_self), format_time(event.cpu_time_total, time_unit),
                 format_time(event.cpu_time, time_unit)]
        if with_memory:
            cells += [format_memory(event.cpu_memory_usage), format_memory(event.self_cpu_memory_usage)]
        cells.append(str(event.count))
        if with_shapes:
            cells.append(_clip(str(event.input_shapes), widths[len(cells)]))
        if with_flops:
            cells.append(f"{event.flops * flops_scale:8.3f}" if event.flops > 0 else "--")
        if with_stack:
            cells.append(_clip(event.stack[0] if event.stack else "", widths[len(cells)]))
        out.append(line(cells))
    out += [rule, f"Self CPU time total: {format_time(total_self, time_unit)}", ""]
    return "\n".join(out)
