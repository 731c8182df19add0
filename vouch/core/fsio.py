"""Atomic file writes: a temp file in the same directory, fsync, rename."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

# O_EXCL: never open a file (or a planted symlink) that is already there, as mkstemp does
_TEMP_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def write_atomic(path: Path, data: bytes | str) -> None:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        _replace(str(path), payload, sync=True)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(path)  # a failed write() names no file; the error should
        raise


def replace_unsynced(path: str, data: bytes) -> None:
    """`write_atomic` without the fsync, for many files whose durable record is elsewhere
    (a landing's commit, which its journal redoes after a crash). A str path: at 13k
    files pathlib costs more than the writes."""
    _replace(path, data, sync=False)


def write_temp(path: str, data: bytes, folder: str | None = None) -> str:
    """`data` in a new temp file beside `path` (or in `folder`, named after it),
    unsynced, for the caller to rename over `path` later (`os.replace`): several files
    then appear within microseconds."""
    fd, tmp = _create_temp(path if folder is None else os.path.join(folder, os.path.basename(path)))
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return tmp


def _replace(path: str, data: bytes, *, sync: bool) -> None:
    """`data` at `path` through a temp file beside it and a rename; fsync'ed first when
    `sync`. Bare os calls: buffered file objects cost more than the write."""
    fd, tmp = _create_temp(path)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _create_temp(path: str) -> tuple[int, str]:
    """A new temp file beside `path`, created 0o666 so the kernel applies the umask.

    `tempfile.mkstemp` creates 0600, so every knowledge file would end up private to its
    writer; an ordinary open() gives 0644 under umask 022 and 0664 under 002 (and honours
    a directory's default ACL), which is what a teammate sharing the clone expects.
    """
    parent, name = os.path.split(path)
    while True:
        tmp = os.path.join(parent, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o666), tmp
        except FileExistsError:
            continue


def append_line(path: Path, line: str) -> None:
    """Append one line with a single write, so a reader never sees half a line."""
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line if line.endswith("\n") else line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(path)
        raise
