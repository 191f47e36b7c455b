"""``minigrad.torch_version`` (PyTorch's ``torch.torch_version``): ``TorchVersion``, the string
``minigrad.__version__`` is, which compares as a version with strings, tuples and lists (``TorchVersion("2.1.0")
>= "2.0"``, ``> (1, 2)``) and falls back to plain string comparison when either side is not a version
(``"parrot"``). ``Version`` parses PEP 440 versions (epoch, release, pre-, post- and dev-releases, local part) and
orders them as the ``packaging`` library does; only what the comparisons need.
"""
import re
from collections.abc import Iterable

from .version import __version__ as internal_version

__all__ = ["TorchVersion"]


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


_PATTERN = re.compile(r"""
    ^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?:-(?P<post_n1>[0-9]+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""", re.VERBOSE | re.IGNORECASE)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}


class Version:
    """A PEP 440 version, ordered as ``packaging.version.Version`` orders them: 1.0.dev0 < 1.0a1 < 1.0rc1 < 1.0 <
    1.0+local < 1.0.post1; trailing zeros of the release do not count (1.0 == 1.0.0)."""

    def __init__(self, text):
        match = _PATTERN.match(str(text))
        if match is None:
            raise InvalidVersion(f"Invalid version: '{text}'")
        g = match.groupdict()
        self._text = str(text)
        release = [int(part) for part in g["release"].split(".")]
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        has_post = g["post_n1"] is not None or g["post_l"] is not None
        if g["pre_l"]:
            pre = (1, _PRE_RANK[g["pre_l"].lower()], int(g["pre_n"] or 0))
        else:
            pre = (0,) if g["dev_l"] and not has_post else (2,)      # a dev-only release comes before its pre-releases
        post = (1, int(g["post_n1"] or g["post_n2"] or 0)) if has_post else (0,)
        dev = (0, int(g["dev_n"] or 0)) if g["dev_l"] else (1,)
        local = (0,) if g["local"] is None else (1, tuple(
            (1, int(part), "") if part.isdigit() else (0, 0, part.lower()) for part in re.split(r"[-_.]", g["local"])))
        self._key = (int(g["epoch"] or 0), tuple(release), pre, post, dev, local)

    def __repr__(self):
        return f"<Version('{self._text}')>"

    def __str__(self):
        return self._text

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return self._key == other._key if isinstance(other, Version) else NotImplemented

    def __lt__(self, other):
        return self._key < other._key if isinstance(other, Version) else NotImplemented

    def __le__(self, other):
        return self._key <= other._key if isinstance(other, Version) else NotImplemented

    def __gt__(self, other):
        return self._key > other._key if isinstance(other, Version) else NotImplemented

    def __ge__(self, other):
        return self._key >= other._key if isinstance(other, Version) else NotImplemented


def _as_version(value):
    """``value`` as a Version: a string parsed, a tuple or list joined with dots ((1, 2) is "1.2"); anything else
    is no version. A ``packaging`` Version (or any object with that class name) is read from its string."""
    if isinstance(value, Version):
        return value
    if isinstance(value, str):
        return Version(value)
    if type(value).__name__ == "Version":
        return Version(str(value))
    if isinstance(value, Iterable):
        return Version(".".join(str(item) for item in value))
    raise InvalidVersion(value)


class TorchVersion(str):
    """A version string (``minigrad.__version__``) that compares as a version: with ``==``, ``<``, ``<=``, ``>``,
    ``>=`` against strings, tuples and lists of numbers, and Versions; if either side is not a valid version the
    comparison is the plain string one. ``!=`` stays the string comparison, as in PyTorch."""

    __slots__ = ()

    def _compare(self, other, method):
        try:
            return getattr(Version(self), method)(_as_version(other))
        except InvalidVersion:
            return getattr(str, method)(self, other)

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    __hash__ = str.__hash__
    __ne__ = str.__ne__


__version__ = TorchVersion(internal_version)
