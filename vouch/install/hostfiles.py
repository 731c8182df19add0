"""Reading an agent host's configuration file (`.mcp.json`, `.cursor/mcp.json`,
`.codex/config.toml`) from a project, bounded.

These files are committed with the repository, so a pull request chooses them: one can
be a link to `/dev/zero` (an endless read), a folder, a FIFO, 200,000 nested `[`
(Python's parsers recurse) or a 50 MB `command`. `install-agent` and `doctor` read them
only here: a regular file reached through no link, at most `MAX_BYTES`, UTF-8, nested at
most `safeload.MAX_DEPTH` deep. Anything else is a `HostFileRefused` (E100, exit 1)
naming the file and what to do; doctor reports it as a warning. `cut` keeps a value
read from one (a command) short in a message.

tomllib is slow (about 3 s a MiB) and slower still on long dotted keys (quadratic in
their parts: one key of 100,000 parts took 96 s), so a TOML text is refused before
parsing when a key has more parts than a value may nest levels (`_DOTTED`), and the
bound on a host's file is 256 KiB, far above any real one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from vouch.core import safeload
from vouch.errors import CorruptFile, UsageError

MAX_BYTES = 256 << 10  # a host's configuration is a few hundred bytes
MAX_SHOWN = 200  # characters of a value read from one that a message quotes
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_FIX = "fix or remove it, then run the command again"
# TOML strings and comments (a dot in them is no key's), left to right
_TOML_TEXT = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
)
# a key of more parts than a value may nest levels: `a.b."c".d...`
_PART = r'(?:[\w-]+|"")'
_DOTTED = re.compile(rf"{_PART}(?:[ \t]*\.[ \t]*{_PART}){{{safeload.MAX_DEPTH}}}")


class HostFileRefused(UsageError):
    """An agent host's file vouch does not read: `rel` and `detail` (what is wrong);
    `syntax` when it is merely not UTF-8, JSON or TOML (the host's to judge) rather than
    past a bound vouch keeps."""

    def __init__(
        self, rel: str, detail: str, *, hint: str | None = _FIX, syntax: bool = False
    ) -> None:
        super().__init__(f"{rel} {detail}; nothing was changed", hint=hint)
        self.rel = rel
        self.detail = detail
        self.syntax = syntax


def cut(value: str, limit: int = MAX_SHOWN) -> str:
    """`value` as a message quotes it: at most `limit` characters, and how many more."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}… ({len(value) - limit} more characters)"


def read(project: Path, rel: str) -> str | None:
    """The text of `project/rel`; None when it does not exist. HostFileRefused when it
    or a folder on its way is a link, it is not a regular file, it holds more than
    MAX_BYTES, or it is not UTF-8."""
    here = project
    for part in Path(rel).parts:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise HostFileRefused(rel, f"cannot be read ({exc.strerror})") from None
        if stat.S_ISLNK(mode):
            link = here.relative_to(project).as_posix()
            how = "is a link" if link == rel else f"is reached through a link ({link})"
            raise HostFileRefused(
                rel,
                f"{how}, and vouch reads no agent configuration through one (a repository "
                "can commit a link that leads anywhere)",
                hint=f"remove the link ({here}) and run the command again",
            )
    if not stat.S_ISREG(mode):
        raise HostFileRefused(rel, "is not a regular file")
    try:
        fd = os.open(here, _FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HostFileRefused(rel, f"cannot be read ({exc.strerror})") from None
    with contextlib.closing(os.fdopen(fd, "rb")) as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped since the lstat
            raise HostFileRefused(rel, "is not a regular file")
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise HostFileRefused(
            rel, f"is larger than vouch reads in an agent host's file ({MAX_BYTES >> 10} KiB)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HostFileRefused(rel, f"is not UTF-8 (byte {exc.start})", syntax=True) from None


def load_json(text: str, rel: str) -> Any:
    """The value of a host's JSON file; HostFileRefused when it is not JSON or nests
    deeper than vouch reads."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep(rel) from None
    except json.JSONDecodeError as exc:
        detail = f"is not valid JSON ({exc.msg}, line {exc.lineno})"
        raise HostFileRefused(rel, detail, syntax=True) from None
    return _bounded(value, rel)


def load_toml(text: str, rel: str) -> dict[str, Any]:
    """The value of a host's TOML file; HostFileRefused when it is not TOML or nests
    deeper than vouch reads (tomllib recurses into arrays and inline tables)."""
    if "." in text and _DOTTED.search(_TOML_TEXT.sub('""', text)) is not None:
        raise _too_deep(rel)
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise _too_deep(rel) from None
    except tomllib.TOMLDecodeError as exc:
        raise HostFileRefused(rel, f"is not valid TOML ({cut(str(exc))})", syntax=True) from None
    bounded: dict[str, Any] = _bounded(value, rel)
    return bounded


def _bounded(value: Any, rel: str) -> Any:
    if isinstance(value, dict | list):
        try:
            safeload.check_depth(value, rel)  # a loop: dotted keys nest without recursing
        except CorruptFile:
            raise _too_deep(rel) from None
    return value


def _too_deep(rel: str) -> HostFileRefused:
    return HostFileRefused(rel, f"nests values more than {safeload.MAX_DEPTH} deep")
