"""Reading a bundle file in bounded memory: sizes checked before anything is read.

A bundle is untrusted input (DESIGN §4.1), and a gzip'd tar can say little and unpack
to much: one member of zeros that unpacks a thousand times larger, a tar header that
declares gigabytes, a million empty members, zeros after the end of the archive, a
header of the tar's own extensions (PAX, GNU long names) the size of the archive.
So nothing is read whole: the file is read in chunks (and hashed as it goes), the gzip
stream is inflated only as far as the tar reader asks and never past what the members
seen so far can account for (`Limits.allowance`), and each member's declared size is
checked against what is left of the cap before its body is read. What is over a limit
is refused at once, naming the limit (`TooBig`); the limits come from `Limits.of` the
configuration (`bundle.max_unpacked_mb`, `bundle.max_members`).
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, BinaryIO

MB = 1 << 20
DEFAULT_UNPACKED_MB = 64
DEFAULT_MEMBERS = 100_000
CHUNK = 1 << 16
TRAILING = 64 << 10  # zeros a tar writer may leave after the archive's end (records)
_PER_MEMBER = 3 * tarfile.BLOCKSIZE  # a header, padding, and a little for a long name
_EXTENSIONS = 1 * MB  # the PAX or GNU long-name headers of one member, at most


class TooBig(Exception):
    """The bundle is over a limit: refused before it is read further."""


class Unreadable(Exception):
    """The file is not a gzip'd tar archive vouch can read at all."""


@dataclass(frozen=True)
class Limits:
    """What a bundle may unpack to: the members' bytes in all, and how many members."""

    unpacked: int = DEFAULT_UNPACKED_MB * MB
    members: int = DEFAULT_MEMBERS

    @classmethod
    def of(cls, config: Any) -> Limits:
        """From the configuration (`bundle.max_unpacked_mb`, `bundle.max_members`); a
        value that is not a positive whole number is the default."""
        if config is None:
            return cls()
        unpacked = config.get("bundle.max_unpacked_mb", DEFAULT_UNPACKED_MB)
        members = config.get("bundle.max_members", DEFAULT_MEMBERS)
        return cls(
            unpacked=(_positive(unpacked) or DEFAULT_UNPACKED_MB) * MB,
            members=_positive(members) or DEFAULT_MEMBERS,
        )

    @property
    def compressed(self) -> int:
        """The largest file that can hold `unpacked` bytes of members (deflate never
        grows data by nearly 1/64)."""
        return self.unpacked + (self.unpacked >> 6) + self.members * _PER_MEMBER + MB

    def allowance(self, declared: int, members: int) -> int:
        """The tar bytes `members` members declaring `declared` bytes can take, with
        their headers and extensions: the gzip stream is never inflated further."""
        return declared + (members + 1) * (_PER_MEMBER + _EXTENSIONS) + TRAILING

    def unpacked_note(self) -> str:
        return f"{self.unpacked // MB} MiB (bundle.max_unpacked_mb in config.yaml)"


def _positive(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def open_file(path: os.PathLike[str] | str, limits: Limits) -> BinaryIO:
    """The bundle file, open for reading, when it is a regular file of a size a bundle
    can have: a FIFO would block the read forever, a device (`/dev/zero`) never ends."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without a writer
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise Unreadable("a directory, not a bundle")
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file (a device, FIFO or socket), not a bundle")
        if info.st_size > limits.compressed:
            raise Unreadable(
                f"larger than {limits.compressed // MB} MiB: no bundle within the limit of "
                f"{limits.unpacked_note()} is"
            )
        return os.fdopen(os.dup(fd), "rb")
    finally:
        os.close(fd)


class Inflating(io.RawIOBase):
    """The gzip stream of `raw`, inflated as it is read and never past `limit` (raised
    as the reader learns more), the compressed bytes hashed as they go; exactly one gzip
    member with nothing after it."""

    def __init__(self, raw: BinaryIO, limits: Limits):
        self.raw = raw
        self.limits = limits
        self.sha = hashlib.sha256()
        self.read_raw = 0
        self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.pending = b""  # compressed bytes not yet inflated
        self.out = 0  # bytes handed out
        self.limit = limits.allowance(0, 0)
        self.ended = False

    def readable(self) -> bool:
        return True

    def _more(self) -> bool:
        chunk = self.raw.read(CHUNK)
        self.read_raw += len(chunk)
        if self.read_raw > self.limits.compressed:
            raise TooBig(f"the file grew past {self.limits.compressed // MB} MiB while read")
        self.sha.update(chunk)
        self.pending += chunk
        return bool(chunk)

    def readinto(self, buffer: Any) -> int:
        want = len(buffer)
        if want == 0 or self.ended:
            return 0
        if self.out + want > self.limit:
            want = self.limit - self.out
            if want <= 0:
                raise TooBig(
                    "it unpacks to more than its members account for (a gzip bomb, or "
                    f"a damaged archive); the limit is {self.limits.unpacked_note()}"
                )
        while True:
            if self.inflater.unconsumed_tail:
                data = self.inflater.unconsumed_tail
            else:
                if not self.pending and not self._more():
                    if self.inflater.eof:
                        self.ended = True
                        return 0
                    raise Unreadable("the gzip stream is cut short")
                data, self.pending = self.pending, b""
            try:
                got = self.inflater.decompress(data, want)
            except zlib.error as exc:
                raise Unreadable(f"not gzip data, or damaged ({exc})") from None
            if self.inflater.eof:
                self.ended = True
                if self.inflater.unused_data or self.pending or self._more():
                    raise Unreadable("bytes follow the gzip stream")
            if got or self.ended:
                buffer[: len(got)] = got
                self.out += len(got)
                return len(got)

    def finish(self) -> str:
        """Hash the rest of the file (nothing more is inflated); the file's sha256."""
        while self._more():
            self.pending = b""
        return self.sha.hexdigest()


@dataclass
class Member:
    """A regular member whose body was read (None: not read, `issue` says why)."""

    name: str
    info: tarfile.TarInfo
    body: bytes | None


def members(stream: Inflating, limits: Limits) -> Iterator[Member | None]:
    """Each member of the tar in `stream`, checked against the limits before its body is
    read (`TooBig` when over one); its body read only for a regular file. Then the end:
    only zeros, at most `TRAILING` of them, may follow the archive."""
    declared = 0
    count = 0
    try:
        tar = tarfile.open(fileobj=stream, mode="r|")  # noqa: SIM115 - the caller closes the file
    except (tarfile.TarError, EOFError, ValueError, OverflowError) as exc:
        raise Unreadable(f"not a tar archive, or damaged ({exc})") from None
    while True:
        try:
            info = tar.next()
        except (tarfile.TarError, EOFError, ValueError, OverflowError, RecursionError) as exc:
            raise Unreadable(f"not a tar archive, or damaged ({exc})") from None
        if info is None:
            break
        tar.members.clear()  # type: ignore[attr-defined]  # else every header is kept
        count += 1
        if count > limits.members:
            raise TooBig(
                f"it holds more than {limits.members} members (bundle.max_members in config.yaml)"
            )
        declared += max(info.size, 0)
        if declared > limits.unpacked:
            raise TooBig(
                f"its members declare more than {limits.unpacked_note()}; "
                f"{_show(info.name)} alone declares {info.size} bytes"
            )
        stream.limit = limits.allowance(declared, count)
        body = None
        if info.isreg():
            found = tar.extractfile(info)
            assert found is not None
            try:
                body = _body(found, info.size)
            except (tarfile.TarError, EOFError, OSError) as exc:
                raise Unreadable(f"member {_show(info.name)} is cut short ({exc})") from None
        yield Member(info.name, info, body)
    stream.limit = limits.allowance(declared, count) + TRAILING
    nonzero = False
    while True:  # through the tar reader: it may hold some of the rest already
        try:
            chunk = tar.fileobj.read(CHUNK)
        except (tarfile.TarError, EOFError) as exc:
            raise Unreadable(f"not a tar archive, or damaged ({exc})") from None
        if not chunk:
            break
        nonzero = nonzero or bool(chunk.strip(b"\0"))
    if nonzero:
        yield None  # bytes after the last member: the caller names the issue


def _body(found: IO[bytes], size: int) -> bytes:
    """A member's body, read in pieces into one growing buffer: its bytes held about
    once (a whole read would join a copy of them), whatever its size."""
    buffer = io.BytesIO()
    left = size
    while left > 0:
        piece = found.read(min(16 * CHUNK, left))
        if not piece:
            break
        buffer.write(piece)
        left -= len(piece)
    return buffer.getvalue()


def _show(name: str) -> str:
    return repr(name) if not name.isprintable() or '"' in name else f'"{name}"'
