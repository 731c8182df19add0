"""git's lock files that a killed vouch process left behind: recorded, found, removed.

git takes `<name>.lock` beside a file it rewrites (`index.lock`, `HEAD.lock`,
`refs/heads/main.lock`, `packed-refs.lock`, and `packed-refs.new` while it writes the
packed refs) and removes it when done. A git process
killed in between — say vouch and its `git update-ref` killed together — leaves them,
and every later git write then fails ("Unable to create '….lock': File exists").

Before vouch makes git take such locks it records, in `git-locks.<pid>.json` in the
clone's state folder, its own pid, the pid of the git process it started, the lock files
that process may take and the time; the record goes once the command returns. A record
whose git outlived its vouch stays until that git is gone too. A record
whose processes are all dead names locks that no live process can hold (vouch writers
take turns under the clone's write lock, and a lock created more than `_WINDOW` seconds
after the record is not theirs): `clear_stale`, run first by every vouch write, removes
them. Any other lock file is reported by `vouch doctor` (`present`), never removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from vouch.core import fsio, processes
from vouch.git.command import GitCommandFailed
from vouch.store import state
from vouch.store.kb import KB

OWNER = "git-locks.{pid}.json"
PACKED_NEW = "packed-refs.new"  # git's temp file for a new packed-refs, taken with O_EXCL too
_WINDOW = 30.0  # seconds after the record within which the recorded git takes its locks


def lock_paths(kb: KB, refs: Iterable[str] = (), *, index: bool = False) -> list[Path]:
    """The lock files git may take to update `refs` (and, with `index`, the index)."""
    store = kb.repo.store
    common = kb.repo.common_dir
    found = [Path(str(common / ref) + ".lock") for ref in refs]
    if refs:
        found += [store.head_file.with_name("HEAD.lock"), common / "packed-refs.lock"]
        found.append(common / PACKED_NEW)
    if index:
        found.append(store.index.with_name(store.index.name + ".lock"))
    return list(dict.fromkeys(found))


@contextlib.contextmanager
def owned(
    kb: KB, refs: Iterable[str] = (), *, index: bool = False
) -> Iterator[Callable[[int], None]]:
    """Record this process as the owner of the lock files git takes for `refs` / the
    index while the block runs; the block calls the yielded function with the pid of
    each git process it starts."""
    record: dict[str, Any] = {
        "pid": os.getpid(),
        "children": [],
        "locks": [str(p) for p in lock_paths(kb, refs, index=index)],
        "at": time.time(),
    }
    target = state.shared(kb) / OWNER.format(pid=os.getpid())

    def save() -> None:  # no fsync: it matters only while this process may die
        fsio.replace_unsynced(str(target), json.dumps(record).encode())

    def started(pid: int) -> None:
        record["children"].append(pid)
        save()

    save()
    try:
        yield started
    except GitCommandFailed as exc:
        if exc.returncode < 0:  # the git it started was killed: its locks are ours
            _release(kb, record)
        raise
    finally:
        target.unlink(missing_ok=True)


def _release(kb: KB, record: dict[str, Any]) -> None:
    """Remove the lock files a killed git of this process left (made within the window
    after the record, inside the git directory), once every git it started is dead — a
    git killed alone, its vouch alive, otherwise left them for every later write."""
    if any(_alive(int(p)) for p in record["children"]):
        return
    for path in _left(kb, record):
        path.unlink(missing_ok=True)


def _records(kb: KB) -> list[tuple[Path, dict[str, Any]]]:
    """Every owner record in the state folder, each checked (a bad one is skipped)."""
    head, _, tail = OWNER.partition("{pid}")
    try:
        names = [n for n in os.listdir(kb.state_dir) if n.startswith(head) and n.endswith(tail)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for name in sorted(names):
        path = kb.state_dir / name
        data = _record(path)
        if data is not None:
            out.append((path, data))
    return out


def _record(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pids = [data.get("pid"), *(data.get("children") or [])]
    locks = data.get("locks")
    if (
        not all(isinstance(p, int) and p > 0 for p in pids)
        or not isinstance(locks, list)
        or not all(isinstance(p, str) and _lockish(p) for p in locks)
        or not isinstance(data.get("at"), int | float)
    ):
        return None
    return data


def _lockish(path: str) -> bool:
    return path.endswith(".lock") or os.path.basename(path) == PACKED_NEW


def _dead(data: dict[str, Any]) -> bool:
    return not any(_alive(int(p)) for p in [data["pid"], *data["children"]])


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (this one always does; a zombie holds no lock)."""
    return pid == os.getpid() or processes.alive(pid)


def _inside_git(kb: KB, path: Path) -> bool:
    """Whether `path` lies in this clone's git directories (a record is never trusted
    to point elsewhere)."""
    real = os.path.realpath(path.parent)
    roots = {os.path.realpath(kb.repo.common_dir), os.path.realpath(kb.repo.store.index.parent)}
    return any(real == r or real.startswith(r + os.sep) for r in roots)


def stale(kb: KB) -> list[tuple[Path, int]]:
    """The lock files dead vouch processes (and their dead git) left, each with the pid
    of the vouch that took it."""
    return [
        (path, int(data["pid"]))
        for _, data in _records(kb)
        if _dead(data)
        for path in _left(kb, data)
    ]


def _left(kb: KB, data: dict[str, Any]) -> list[Path]:
    """The record's lock files that exist and were made within the window after it,
    inside this clone's git directories: the ones its git took."""
    at = float(data["at"])
    found = []
    for name in data["locks"]:
        path = Path(name)
        try:
            made = os.lstat(path).st_mtime
        except OSError:
            continue
        if at - 1 <= made <= at + _WINDOW and _inside_git(kb, path):
            found.append(path)
    return found


def clear_stale(kb: KB) -> list[Path]:
    """Remove the locks dead vouch processes left (see the module docstring) and their
    records; a record naming a live process stays. The caller holds the write lock."""
    found = [path for path, _ in stale(kb)]
    for path in found:
        path.unlink(missing_ok=True)
    for record, data in _records(kb):
        if _dead(data):
            record.unlink(missing_ok=True)
    return found


def present(kb: KB) -> list[Path]:
    """Every git lock file of this work tree and clone that exists now: the index's,
    HEAD's, packed-refs' and any ref's."""
    common = kb.repo.common_dir
    store = kb.repo.store
    found = [
        store.index.with_name(store.index.name + ".lock"),
        store.head_file.with_name("HEAD.lock"),
        common / "HEAD.lock",
        common / "packed-refs.lock",
        common / PACKED_NEW,
    ]
    out = [p for p in dict.fromkeys(found) if os.path.lexists(p)]
    for folder, _dirs, names in os.walk(common / "refs"):
        out += [Path(folder) / n for n in names if n.endswith(".lock")]
    return out
