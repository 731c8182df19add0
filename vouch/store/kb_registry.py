"""The user's registry of knowledge bases: names for the repositories `vouch search --all`
searches together (`vouch kb add|list|remove`).

One small YAML file per user, `$XDG_CONFIG_HOME/vouch/kbs.yaml` (`~/.config/vouch/` when
the variable is unset or not absolute), never in a repository: which knowledge bases a
person searches together is theirs, and nothing a clone, a branch or an agent sends can
add to it (the agent transports take names already in it, never paths). The file maps
names to the resolved top folder of each repository:

    knowledge_bases:
      handbook: /home/ada/src/handbook

Written atomically (a temp file and a rename, under a lock beside it); read with the
one bounded YAML reader. A file edited by hand into something else is E111 naming the
file and what to fix, never a traceback; an entry with a bad name or a relative path is
refused the same way, so a search never acts on half a registry.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from vouch.core import fsio, yamlio
from vouch.errors import CorruptFile, NotFound, SettingsInvalid, UsageError
from vouch.store.root import VOUCH_DIR

FILE_NAME = "kbs.yaml"
KEY = "knowledge_bases"
ALL = "all"  # `kbs: ["all"]`: every registered knowledge base (never a name)
MAX_BYTES = 256 * 1024  # a registry of thousands of entries fits many times over
MAX_ENTRIES = 1000
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_HEADER = (
    "# vouch's knowledge bases (`vouch kb add|list|remove`); `vouch search --all` searches them\n"
)


class Entry(NamedTuple):
    name: str
    path: str  # the repository's top folder, absolute and resolved when it was added


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/vouch`, or `~/.config/vouch` (the XDG base directory rule: a
    relative value is ignored)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "vouch"


def registry_path() -> Path:
    return config_dir() / FILE_NAME


def check_name(name: str) -> str:
    """`name` when it can name a knowledge base (letters, digits, `.`, `_`, `-`; 64 at
    most; not `all`), else E100 saying what a name may be."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or name == ALL:
        shown = name if isinstance(name, str) and len(name) <= 80 else "that name"
        raise UsageError(
            f"{shown!r} is not a knowledge-base name",
            hint="a name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or "
            f"digit, and not {ALL!r}; pass --name NAME",
        )
    return name


def entries() -> list[Entry]:
    """The registered knowledge bases, in the file's order ([] when there is no file)."""
    return _read(registry_path())


def named(names: list[str]) -> list[Entry]:
    """The entries `names` name (`["all"]`: every one), in the registry's order; E101
    for a name the registry lacks (a path is no name: E100). Each name once."""
    known = entries()
    if names == [ALL]:
        return known
    by_name = {e.name: e for e in known}
    wanted: list[str] = []
    for name in names:
        if name == ALL:
            raise UsageError(f"{ALL!r} stands alone", hint=f'pass ["{ALL}"] or names')
        check_name(name)
        if name not in by_name:
            raise NotFound(
                f"no knowledge base named {name!r} in {registry_path()}",
                hint="`vouch kb list` shows the names; a person adds one with "
                "`vouch kb add PATH --name NAME`",
            )
        if name not in wanted:
            wanted.append(name)
    return [by_name[n] for n in wanted]


def add(path: str | os.PathLike[str], name: str | None = None) -> Entry:
    """Register the knowledge base at `path` (its repository's top folder, or the
    `.vouch` folder itself) under `name` (default: the folder's name). Refused (E100,
    nothing written) when it is not a knowledge base vouch would open there — `.vouch`
    a link or a file, no config.yaml — or when the name or the path is registered."""
    top = knowledge_base_top(Path(path))
    name = check_name(name if name is not None else top.name)
    with _locked():
        known = entries()
        for e in known:
            if e.name == name:
                raise UsageError(
                    f"{name!r} is registered already ({e.path})",
                    hint="choose another --name, or `vouch kb remove` it first",
                )
            if e.path == str(top):
                raise UsageError(
                    f"{top} is registered already as {e.name!r}",
                    hint=f"`vouch kb remove {e.name}` first to rename it",
                )
        if len(known) >= MAX_ENTRIES:
            raise UsageError(f"the registry holds {MAX_ENTRIES} knowledge bases, its limit")
        entry = Entry(name, str(top))
        _write([*known, entry])
    return entry


def remove(name: str) -> Entry:
    """Forget `name` (its repository is not touched); E101 when it is not registered."""
    check_name(name)
    with _locked():
        known = entries()
        found = next((e for e in known if e.name == name), None)
        if found is None:
            raise NotFound(
                f"no knowledge base named {name!r} in {registry_path()}",
                hint="`vouch kb list` shows the names",
            )
        _write([e for e in known if e.name != name])
    return found


def knowledge_base_top(path: Path) -> Path:
    """The resolved top folder of the knowledge base at `path` (or at `path` named
    `.vouch`); E100 when there is none a search could safely read."""
    given = path.expanduser().absolute()
    if given.name == VOUCH_DIR:
        given = given.parent
    top = Path(os.path.realpath(given))
    problem = hostile(top)
    if problem is not None:
        raise UsageError(f"{path} cannot be registered: {problem}", hint=_ADD_HINT)
    return top


_ADD_HINT = "give the top folder of a repository where `vouch init` ran"


def hostile(top: Path) -> str | None:
    """Why `top` is no knowledge base to read, or None: what `vouch search --all`
    reports for a registered path before opening anything there. A link anywhere in the
    path (the registry holds resolved paths, so one there now was put there since),
    `.vouch` or its config.yaml that is a link or not what it should be."""
    try:
        if not os.path.lexists(top):
            return "it does not exist"
        if os.path.realpath(top) != str(top):
            return "its path now leads through a symbolic link (not followed)"
        if not os.path.isdir(top):
            return "it is not a folder"
        inner = top / VOUCH_DIR
        if os.path.islink(inner):
            return f"{VOUCH_DIR} there is a symbolic link (not followed)"
        if not os.path.lexists(inner):
            return f"it holds no {VOUCH_DIR} folder (not a vouch knowledge base)"
        if not os.path.isdir(inner):
            return f"{VOUCH_DIR} there is a file, not a folder"
        config = inner / "config.yaml"
        if os.path.islink(config):
            return f"{VOUCH_DIR}/config.yaml there is a symbolic link (not followed)"
        if not os.path.isfile(config):
            return f"{VOUCH_DIR} there holds no config.yaml (not a vouch knowledge base)"
        if not os.access(inner, os.R_OK | os.X_OK) or not os.access(config, os.R_OK):
            return "it cannot be read by this user"
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    return None


# -- the file -------------------------------------------------------------------------


def _read(path: Path) -> list[Entry]:
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except FileNotFoundError:
        return []
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _invalid(path, "it is a symbolic link (not followed)") from exc
        raise _invalid(path, f"it cannot be read ({exc.strerror})") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _invalid(path, "it is not a regular file")
        data = b""
        while len(data) <= MAX_BYTES:
            more = os.read(fd, MAX_BYTES + 1 - len(data))
            if not more:
                break
            data += more
    except OSError as exc:
        raise _invalid(path, f"it cannot be read ({exc.strerror})") from exc
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise _invalid(path, f"it is larger than {MAX_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
        loaded = yamlio.load_yaml(text, where=str(path))
    except (UnicodeDecodeError, CorruptFile) as exc:
        raise _invalid(path, str(exc)) from exc
    unknown = sorted(set(loaded) - {KEY})
    if unknown:
        raise _invalid(path, f"unknown key(s) {', '.join(map(str, unknown))}")
    table = loaded.get(KEY) or {}
    if not isinstance(table, dict):
        raise _invalid(path, f"{KEY} must map names to paths")
    if len(table) > MAX_ENTRIES:
        raise _invalid(path, f"it holds more than {MAX_ENTRIES} knowledge bases")
    out: list[Entry] = []
    for name, where in table.items():
        if not isinstance(name, str) or not NAME.fullmatch(name) or name == ALL:
            raise _invalid(path, f"{str(name)[:80]!r} is not a knowledge-base name")
        if not isinstance(where, str) or not os.path.isabs(where) or "\0" in where:
            raise _invalid(path, f"the path of {name!r} must be an absolute path")
        out.append(Entry(name, os.path.normpath(where)))
    return out


def _invalid(path: Path, why: str) -> SettingsInvalid:
    return SettingsInvalid(
        f"the knowledge-base registry {path} is unusable: {why}",
        hint=f"fix or delete {path} (then `vouch kb add PATH` again); nothing was changed",
    )


def _write(known: list[Entry]) -> None:
    path = registry_path()
    body = yamlio.dump_yaml({KEY: {e.name: e.path for e in known}} if known else {KEY: {}})
    fsio.write_atomic(path, _HEADER + body)


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One writer of the registry at a time (two `kb add` at once both land)."""
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(
        folder / (FILE_NAME + ".lock"),
        os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
        0o600,
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
