"""How YAML 1.1 reads a plain scalar: PyYAML's implicit resolvers, for vouch's reader
(`fastyaml`) and writer (`fastdump`) stand-ins, which must agree with PyYAML without
importing it (~10 ms of a cold command)."""

from __future__ import annotations

import re
from typing import Any

FAIL: Any = object()


class Lazy:
    """A regular expression compiled on first use: config files take a few of these
    paths, and compiling all of them (the Unicode class above all) cost every cold
    command ~4 ms. Behaves as the compiled pattern."""

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


# Characters YAML reads as themselves: no tab, CR, controls, BOM, NEL/LS/PS, surrogates
# (ruamel writes them as themselves too, with allow_unicode). ASCII text is checked by a
# small class: compiling the whole one costs ~5 ms of a cold command.
_PRINTABLE = "\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"
_READABLE = {
    False: (Lazy("[\x20-\x7e]*"), Lazy(f"[{_PRINTABLE}]*")),
    True: (Lazy("[\n\x20-\x7e]*"), Lazy(f"[\n{_PRINTABLE}]*")),
}


def readable(text: str, *, lines: bool = False) -> bool:
    """Whether every character of `text` is one YAML reads as itself (and newlines,
    with `lines`)."""
    ascii_only, every = _READABLE[lines]
    return (ascii_only if text.isascii() else every).fullmatch(text) is not None


# yaml.resolver's implicit resolvers (PyYAML 6), each tried when the scalar starts with
# one of its characters, in PyYAML's order.
_BOOL = Lazy(
    r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE"
    r"|on|On|ON|off|Off|OFF)$"
)
_FLOAT = Lazy(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_INT = Lazy(
    r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""",
    re.X,
)
_NULL = Lazy(r"^(?:~|null|Null|NULL)$")
_TIMESTAMP = Lazy(
    r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
    re.X,
)
# the numbers converted here, exactly as PyYAML's constructors do (sign * int / float)
_SIMPLE_INT = Lazy(r"[-+]?(?:0|[1-9][0-9]*)")
_SIMPLE_FLOAT = Lazy(r"[-+]?(?:0|[1-9][0-9]*)\.[0-9]+")


def resolve(s: str) -> Any:
    """The value PyYAML gives the plain scalar `s`, or FAIL for one left to it."""
    first = s[0]
    if first in "yYnNtTfFoO" and _BOOL.match(s):
        return s.lower() in ("yes", "true", "on")
    if first in "-+0123456789.":
        if _FLOAT.match(s):
            return float(s) if _SIMPLE_FLOAT.fullmatch(s) else FAIL
        if first != "." and _INT.match(s):
            return int(s) if _SIMPLE_INT.fullmatch(s) else FAIL
    if first in "~nN" and _NULL.match(s):
        return None
    if s in ("<<", "=") or (first in "0123456789" and _TIMESTAMP.match(s)):
        return FAIL
    return s
