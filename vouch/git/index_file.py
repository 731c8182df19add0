"""The user's git index, read and patched in place for a handful of paths.

Why not `git update-index` / `git status -- paths`: each reads (and update-index also
rewrites) the whole index, ~20 MB and 100+ ms at 100k files, on every approval. The gate
only ever touches a few `.vouch/` paths, so this module finds those entries with
anchored byte searches (no walk over all entries), splices the new ones in, invalidates
the cache-tree on their directories and writes the file back under `index.lock` with a
fresh checksum: about a memory copy plus one hash of the file.

What is patched, and what is left to git (tests/test_git_index_variants.py builds each
case in a real repository and compares the result with `git update-index`):

- versions 2 and 3, sha1 and sha256 repositories; entries elsewhere in the index may
  carry any flags (skip-worktree in a sparse checkout, intent-to-add);
- extensions: the cache-tree (TREE) is invalidated on the touched directories; resolve-
  undo (REUC) is kept; the untracked cache (UNTR), fsmonitor state (FSMN), EOIE/IEOT and
  any optional extension this module does not know are dropped — caches git rebuilds
  on its next command (FSMN's bitmap counts entries by position, so a kept one would
  mark the wrong files unchanged; without it git checks every file once);
- left to git (None / False, the caller falls back to `git update-index`, always
  correct, just slower): version 4 (prefix-compressed paths), a split index (`link`), a
  sparse index (`sdir`), a touched entry that is conflicted or flagged, an EOIE that
  disagrees with where the entries end, and anything that does not parse.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from vouch.git import cache_tree

_KNOWN_EXT = {b"TREE", b"REUC", b"UNTR", b"EOIE", b"IEOT", b"FSMN", b"link", b"sdir"}
_EXT_SIG = re.compile(b"|".join(sorted(_KNOWN_EXT)))
_KEPT = {b"TREE", b"REUC"}  # the rest are optional caches git rebuilds (see above)
_UNSUPPORTED = {b"link", b"sdir"}  # split / sparse index: leave those to git
_HASH_BYTES = {"sha1": 20, "sha256": 32}
_STAT_BYTES = 40  # ctime, mtime, dev, ino, mode, uid, gid, size: ten 32-bit fields
_FLAG_EXTENDED = 0x4000
_FLAG_STAGE = 0x3000
_NAME_MASK = 0x0FFF
_MODE_FILE = 0o100644


class Unsupported(Exception):
    """This index needs git itself."""


@dataclass(frozen=True)
class Entry:
    start: int
    end: int
    path: bytes
    sha: str
    flags: int
    ctime: tuple[int, int]
    mtime: tuple[int, int]
    ino: int
    size: int


def _entry_at(data: bytes | mmap.mmap, start: int, version: int, width: int) -> Entry:
    flags = struct.unpack_from(">H", data, start + _STAT_BYTES + width)[0]
    head = _STAT_BYTES + width + 2
    if flags & _FLAG_EXTENDED:
        if version < 3:
            raise Unsupported("extended flags in a version 2 index")
        head += 2
    name_start = start + head
    nul = data.find(b"\0", name_start)
    if nul < 0:
        raise Unsupported("not an entry")
    namelen = flags & _NAME_MASK
    if namelen != _NAME_MASK and namelen != nul - name_start:
        raise Unsupported("not an entry")
    size = (head + (nul - name_start) + 8) & ~7
    ctime = struct.unpack_from(">II", data, start)
    mtime = struct.unpack_from(">II", data, start + 8)
    ino = struct.unpack_from(">I", data, start + 20)[0]
    fsize = struct.unpack_from(">I", data, start + 36)[0]
    return Entry(
        start,
        start + size,
        data[name_start:nul],
        data[start + _STAT_BYTES : start + _STAT_BYTES + width].hex(),
        flags,
        (ctime[0], ctime[1]),
        (mtime[0], mtime[1]),
        ino,
        fsize,
    )


class Index:
    """One snapshot of an index file, with the entry region located."""

    def __init__(self, path: Path, algo: str = "sha1"):
        # The trailing checksum is not verified, as git itself does not on ordinary reads
        # (only fsck does): hashing 20 MB would cost more than the whole patch.
        self.path = path
        self.algo = algo
        self.width = _HASH_BYTES[algo]  # object ids and the trailing checksum
        self._heads = (_STAT_BYTES + self.width + 2, _STAT_BYTES + self.width + 4)
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_size < 32:
                raise Unsupported("not an index file")
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        self.stat_key = stat_key(st)
        self._found: dict[str, tuple[int, Entry | None]] = {}
        if data[:4] != b"DIRC":
            raise Unsupported("not an index file")
        self.version, self.count = struct.unpack_from(">II", data, 4)
        if self.version not in (2, 3):
            raise Unsupported(f"index version {self.version}")
        self.data = data
        self._cursor = 12  # searches for path-sorted lookups start here
        self.entries_end, self.extensions = self._extensions()

    @classmethod
    def written_by(cls, old: Index, path: Path) -> Index | None:
        """The index `old.write_patched` just wrote to `path`, from the layout it
        recorded (no search for where the entries end); None when the file changed."""
        count, entries_end, extensions = old.written
        index = cls.__new__(cls)
        index.path, index.algo, index.width, index._heads = path, old.algo, old.width, old._heads
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        tail = entries_end + sum(8 + len(body) for _, body in extensions) + old.width
        if len(data) != tail or data[:4] != b"DIRC":
            return None
        index.stat_key = stat_key(st)
        index._found = {}
        index.version, index.count = struct.unpack_from(">II", data, 4)
        if (index.version, index.count) != (old.version, count):
            return None
        index.data, index._cursor = data, 12
        index.entries_end, index.extensions = entries_end, extensions
        return index

    def _extensions(self) -> tuple[int, list[tuple[bytes, bytes]]]:
        """Where entries end, and the extensions after them, verified as a chain.

        Extensions sit at the end of the file, so the last few occurrences of each known
        signature are the candidates; the smallest one whose chain of (signature, size)
        records ends exactly at the checksum, and right after a well-formed entry, wins.
        """
        data, tail = self.data, len(self.data) - self.width
        window = 1 << 16
        while True:
            low = max(12, tail - window)
            candidates = {tail, *(m.start() for m in _EXT_SIG.finditer(data, low, tail))}
            for start in sorted(candidates):
                if (start - 12) % 8:
                    continue
                chain = self._chain(start, tail)
                if chain is not None and (
                    (start == 12 and not self.count) or self._ends_an_entry(start)
                ):
                    return start, chain
            if low == 12:
                raise Unsupported("cannot find the end of the entries")
            window *= 16

    def _ends_an_entry(self, end: int) -> bool:
        """Whether a well-formed entry ends exactly at `end` (NUL padding after a path)."""
        data = self.data
        if data[end - 1] != 0:
            return False
        path_end = end - 1
        while path_end > 12 and data[path_end - 1] == 0 and end - path_end < 8:
            path_end -= 1
        short, long = self._heads
        for namelen in range(1, min(_NAME_MASK, path_end - 12 - short) + 1):
            name_start = path_end - namelen
            for head in self._heads:
                start = name_start - head
                if start < 12 or (start - 12) % 8:
                    continue
                flags = struct.unpack_from(">H", data, start + _STAT_BYTES + self.width)[0]
                if (
                    flags & _NAME_MASK == namelen
                    and (head == long) == bool(flags & _FLAG_EXTENDED)
                    and (head + namelen + 8) & ~7 == end - start
                ):
                    return True
        return False

    def _chain(self, start: int, tail: int) -> list[tuple[bytes, bytes]] | None:
        exts = []
        pos = start
        while pos < tail:
            if pos + 8 > tail:
                return None
            sig = self.data[pos : pos + 4]
            size = struct.unpack_from(">I", self.data, pos + 4)[0]
            if sig not in _KNOWN_EXT and not (b"A"[0] <= sig[0] <= b"Z"[0]):
                return None
            exts.append((sig, self.data[pos + 8 : pos + 8 + size]))
            pos += 8 + size
        if pos != tail:
            return None
        if any(sig in _UNSUPPORTED for sig, _ in exts):
            raise Unsupported("split or sparse index")
        for sig, body in exts:  # end of index entries: must agree, when git wrote one
            if sig == b"EOIE" and (len(body) < 4 or struct.unpack_from(">I", body)[0] != start):
                raise Unsupported("the EOIE extension disagrees")
        return exts

    # -- finding entries ----------------------------------------------------------------
    def _anchor(self, prefix: bytes) -> Entry | None:
        """The first entry whose path starts with `prefix` (entries are path-sorted)."""
        pos = self.data.find(prefix, self._cursor, self.entries_end)
        while pos != -1:
            for head in self._heads:
                start = pos - head
                if start >= 12 and (start - 12) % 8 == 0:
                    try:
                        entry = _entry_at(self.data, start, self.version, self.width)
                    except (Unsupported, ValueError, struct.error):
                        continue
                    if entry.path.startswith(prefix) and entry.end <= self.entries_end:
                        return entry
            pos = self.data.find(prefix, pos + 1, self.entries_end)
        return None

    def locate(self, path: str, max_walk: int = 4096) -> tuple[int, Entry | None]:
        """(offset, entry): the entry for `path`, or where a new one would be inserted.

        Look-ups in path order reuse the previous position (`_cursor`), so finding all the
        paths of one gate commit costs about one scan of the file at most.
        """
        want = path.encode()
        parts = want.split(b"/")
        for depth in range(len(parts) - 1, -1, -1):
            prefix = b"/".join(parts[:depth]) + b"/" if depth else b""
            if prefix:
                anchor = self._anchor(prefix)
            else:
                anchor = _entry_at(self.data, 12, self.version, self.width) if self.count else None
            if anchor is None:
                if not prefix:
                    return 12, None  # an empty index
                continue
            if anchor.path > want:
                return anchor.start, None  # before the first entry of the directory
            entry = anchor
            for _ in range(max_walk):
                if entry.path == want:
                    return entry.start, entry
                if entry.path > want:
                    return entry.start, None
                if entry.end >= self.entries_end:
                    return self.entries_end, None
                entry = _entry_at(self.data, entry.end, self.version, self.width)
            raise Unsupported("too many entries to walk")
        return self.entries_end, None

    def lookup(self, paths: Iterable[str]) -> dict[str, tuple[int, Entry | None]]:
        """`locate` for several paths, in path order (each search starts at the last)."""
        found = {}
        for path in sorted(paths, key=lambda p: p.encode()):
            if path not in self._found:
                self._found[path] = self.locate(path)
            found[path] = self._found[path]
            self._cursor = max(self._cursor, found[path][0])
        self._cursor = 12
        return found

    def entries(self, paths: Iterable[str]) -> dict[str, Entry | None]:
        """The stage-0 entry of each path (None when untracked)."""
        out = {}
        for path, (_, found) in self.lookup(paths).items():
            if found is not None and found.flags & (_FLAG_STAGE | _FLAG_EXTENDED):
                raise Unsupported(f"{path} is conflicted or flagged in the index")
            out[path] = found
        return out

    # -- writing -----------------------------------------------------------------------------
    def patched(self, entries: dict[str, tuple[str, os.stat_result | None] | None]) -> bytearray:
        """New index bytes with these paths set to (blob, work-tree stat) or removed."""
        out = bytearray()
        self.write_patched(entries, out.extend)
        return out

    def write_patched(
        self,
        entries: dict[str, tuple[str, os.stat_result | None] | None],
        write: Callable[[bytes | memoryview], object],
    ) -> None:
        """Stream the patched index to `write`, checksum last, without a whole copy."""
        spans: list[tuple[int, int, bytes, bytes]] = []  # (start, end, path, replacement)
        delta = 0
        # the cache-tree is invalidated only above paths whose blob or presence changes:
        # a patch that only adds stat data (the same blobs) leaves every tree valid
        moved: list[str] = []
        for path, (offset, found) in self.lookup(entries).items():
            if found is not None and found.flags & (_FLAG_STAGE | _FLAG_EXTENDED):
                raise Unsupported(f"{path} is conflicted or flagged in the index")
            value = entries[path]
            if found is None and value is None:
                continue
            if found is None or value is None or found.sha != value[0]:
                moved.append(path)
            new = b"" if value is None else _pack_entry(path.encode(), *value)
            spans.append((offset, found.end if found is not None else offset, path.encode(), new))
            delta += (1 if value is not None else 0) - (1 if found is not None else 0)
        spans.sort(key=lambda span: (span[0], span[2]))  # same offset: path order
        tail = bytearray()
        kept: list[tuple[bytes, bytes]] = []
        for sig, body in self.extensions:
            if sig not in _KEPT:
                continue
            if sig == b"TREE" and moved:
                body = cache_tree.invalidate(body, moved, self.width)
            tail += sig + struct.pack(">I", len(body)) + body
            kept.append((sig, bytes(body)))
        digest = hashlib.new(self.algo)

        def emit(chunk: bytes | memoryview) -> None:
            digest.update(chunk)
            write(chunk)

        emit(self.data[:4] + struct.pack(">II", self.version, self.count + delta))
        view = memoryview(self.data)  # slices without copies
        written = 12
        try:
            pos = 12
            for start, end, _path, new in spans:
                if start < pos:
                    raise Unsupported("overlapping index edits")
                emit(view[pos:start])
                emit(new)
                written += start - pos + len(new)
                pos = end
            emit(view[pos : self.entries_end])
            written += self.entries_end - pos
        finally:
            view.release()
        emit(bytes(tail))
        write(digest.digest())
        self.written = (self.count + delta, written, kept)


def _pack_entry(path: bytes, sha: str, st: os.stat_result | None) -> bytes:
    if st is None:  # no stat data (as `git update-index --index-info`): git re-hashes
        head = struct.pack(">IIIIIIIIII", 0, 0, 0, 0, 0, 0, _MODE_FILE, 0, 0, 0)
        flags = min(len(path), _NAME_MASK)
        body = head + bytes.fromhex(sha) + struct.pack(">H", flags) + path
        return body + b"\0" * (8 - (len(body) % 8))
    head = struct.pack(
        ">IIIIIIIIII",
        int(st.st_ctime) & 0xFFFFFFFF,
        st.st_ctime_ns % 1_000_000_000,
        int(st.st_mtime) & 0xFFFFFFFF,
        st.st_mtime_ns % 1_000_000_000,
        st.st_dev & 0xFFFFFFFF,
        st.st_ino & 0xFFFFFFFF,
        _MODE_FILE,
        st.st_uid & 0xFFFFFFFF,
        st.st_gid & 0xFFFFFFFF,
        st.st_size & 0xFFFFFFFF,
    )
    flags = min(len(path), _NAME_MASK)
    body = head + bytes.fromhex(sha) + struct.pack(">H", flags) + path
    return body + b"\0" * (8 - (len(body) % 8))


def read(path: Path, algo: str = "sha1") -> Index | None:
    try:
        return Index(path, algo)
    except (Unsupported, FileNotFoundError, ValueError, struct.error):
        return None


def stat_key(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def update(
    path: Path,
    entries: dict[str, tuple[str, os.stat_result | None] | None],
    snapshot: Index | None = None,
    algo: str = "sha1",
) -> bool:
    """`patch`, True when it wrote the index."""
    return patch(path, entries, snapshot, algo)[0]


def patch(
    path: Path,
    entries: dict[str, tuple[str, os.stat_result | None] | None],
    snapshot: Index | None = None,
    algo: str = "sha1",
) -> tuple[bool, Index | None]:
    """Patch the index under git's `index.lock`, so no git command runs in between.

    `snapshot` (from an earlier `read`) is reused when the file has not changed since,
    sparing a second parse. Returns whether it wrote (False: the index needs git itself,
    or git holds the lock) and the new index as a snapshot for the next patch.
    """
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False, None
    try:
        with os.fdopen(fd, "wb") as fh:
            try:
                current = snapshot
                if (
                    current is None
                    or current.algo != algo
                    or current.stat_key != stat_key(os.stat(path))
                ):
                    current = Index(path, algo)
                current.write_patched(entries, fh.write)
            except (Unsupported, FileNotFoundError, ValueError, struct.error):
                lock.unlink(missing_ok=True)
                return False, None
        os.replace(lock, path)
    except BaseException:
        lock.unlink(missing_ok=True)
        raise
    try:
        return True, Index.written_by(current, path)
    except (OSError, ValueError, struct.error):
        return True, None
