"""Git's object database, in-process: loose objects written with zlib, objects read
through one long-lived `git cat-file --batch` process, and raw tree (de)serialisation.

Object ids follow the repository's hash (`extensions.objectFormat`: sha1, or sha256 for
`git init --object-format=sha256`); `ObjectStore.algo` names it and everything that
hashes asks the store.
"""

import hashlib
import os
import struct
import subprocess
import threading
import weakref
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar

from vouch.errors import GitFailure
from vouch.git.command import _BASE_ENV, EMPTY_TREES, run

HASH_BYTES = {"sha1": 20, "sha256": 32}
T = TypeVar("T")


class ObjectStore:
    """Git objects without a process per object.

    Reads go through one long-lived `git cat-file --batch-command`; loose objects are
    written in-process (zlib + the repository's hash, exactly git's format). A gate
    operation then costs a handful of git processes instead of one per tree level and
    blob.
    """

    def __init__(self, root: Path):
        self.root = root
        out = run(
            [
                "rev-parse",
                "--git-path",
                "objects",
                "--git-path",
                "index",
                "--git-path",
                "HEAD",
                "--git-common-dir",
                "--show-object-format",
            ],
            root,
        ).split("\n")
        objects, index, head, common = (Path(line) for line in out[:4])
        self.objects = objects if objects.is_absolute() else root / objects
        self.index = index if index.is_absolute() else root / index
        self.head_file = head if head.is_absolute() else root / head
        self.common_dir = common if common.is_absolute() else root / common
        algo = out[4].strip()
        if algo not in HASH_BYTES:
            raise GitFailure(f"unsupported object format {algo!r} in {root}")
        self.algo = algo
        self.sha1 = algo == "sha1"
        self.width = HASH_BYTES[algo]  # bytes of a raw object id
        self.empty_tree = EMPTY_TREES[algo]
        self.null_id = "0" * (2 * self.width)
        self._trees: dict[str, list[tuple[str, str, str, str]]] = {}
        self._peeled: dict[str, str | None] = {}  # full commit/tree id -> its tree
        # objects this process wrote, kept to be read back without a pipe round trip
        # (a landing writes each new blob to the work tree right after making it)
        self._written: dict[str, tuple[str, bytes]] = {}
        self._written_bytes = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._mutex = threading.Lock()
        self._packing: dict[str, tuple[str, bytes]] | None = None  # see `batch`

    def _batch(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                ["git", "cat-file", "--batch-command"],
                cwd=self.root,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={**os.environ, **_BASE_ENV},
            )
            weakref.finalize(self, _close, self._proc)
        return self._proc

    def _ask(self, command: str) -> tuple[str, str, int, subprocess.Popen[bytes]] | None:
        proc = self._batch()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(_request(command) + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline()
        except (BrokenPipeError, OSError) as exc:
            raise GitFailure(f"git cat-file stopped: {exc}") from exc
        if not header:
            raise GitFailure("git cat-file stopped unexpectedly")
        fields = _fields(header)
        if fields is None:
            return None  # "<name> missing" or "ambiguous"
        return fields[0], fields[1], int(fields[2]), proc

    def _kept(self, name: str) -> tuple[str, bytes] | None:
        """An object this store wrote (or is packing) and git may not hold yet."""
        kept = self._written.get(name)
        if kept is None and self._packing is not None:
            kept = self._packing.get(name)
        return kept

    def read(self, name: str) -> tuple[str, bytes] | None:
        """(type, content) of an object name (sha or `rev:path`), or None when missing."""
        kept = self._kept(name)
        if kept is not None:
            return kept
        with self._contents(name) as found:
            if found is None:
                return None
            typ, size, stdout = found
            return typ, stdout.read(size)

    def read_ends(self, name: str, head: int, tail: int) -> tuple[str, bytes, bytes, int] | None:
        """(type, its first `head` bytes, its last `tail` bytes, its size) of an object, or
        None when missing: an object of any size costs `head + tail` bytes of memory (the
        middle is read through and dropped), for objects a branch or ref may make huge."""
        kept = self._kept(name)
        if kept is not None:
            return kept[0], kept[1][:head], kept[1][-tail:] if tail else b"", len(kept[1])
        with self._contents(name) as found:
            if found is None:
                return None
            typ, size, stdout = found
            first = stdout.read(min(size, head))
            last, left = first[-tail:] if tail else b"", size - len(first)
            while left > 0:
                got = stdout.read(min(left, 1 << 20))
                if not got:
                    raise GitFailure("git cat-file stopped unexpectedly")
                left -= len(got)
                last = (last + got)[-tail:] if tail else b""
            return typ, first, last, size

    @contextmanager
    def _contents(self, name: str) -> Iterator[tuple[str, int, IO[bytes]] | None]:
        """Under the lock: (type, size, the stream holding the content) of an object, or
        None when missing. The caller reads the `size` bytes; the newline git writes after
        them is read here when the block ends without an error."""
        with self._mutex:
            found = self._ask(f"contents {name}")
            if found is None:
                yield None
                return
            _, typ, size, proc = found
            assert proc.stdout is not None
            yield typ, size, proc.stdout
            proc.stdout.read(1)  # the newline after the content

    def info(self, name: str) -> tuple[str, str] | None:
        """(sha, type) of an object name, or None when missing."""
        with self._mutex:
            found = self._ask(f"info {name}")
            return None if found is None else (found[0], found[1])

    def info_many(self, names: list[str], chunk: int = 128) -> list[tuple[str, str] | None]:
        """`info` for many names, pipelined: a round trip per chunk, not per name."""

        def answer(stdout: IO[bytes]) -> tuple[str, str] | None:
            fields = _header(stdout)
            return None if fields is None else (fields[0], fields[1])

        return self._pipelined([f"info {n}" for n in names], chunk, answer)

    def read_many(self, names: list[str], chunk: int = 64) -> list[tuple[str, bytes] | None]:
        """`read` for many names, pipelined like `info_many`. Objects this process wrote
        are not asked for."""

        def answer(stdout: IO[bytes]) -> tuple[str, bytes] | None:
            fields = _header(stdout)
            if fields is None:
                return None
            data = stdout.read(int(fields[2]))
            stdout.read(1)  # the newline after the content
            return fields[1], data

        out: list[tuple[str, bytes] | None] = [self._written.get(n) for n in names]
        asked = [i for i, found in enumerate(out) if found is None]
        found = self._pipelined([f"contents {names[i]}" for i in asked], chunk, answer)
        for i, got in zip(asked, found, strict=True):
            out[i] = got
        return out

    def _pipelined(
        self, requests: list[str], chunk: int, answer: Callable[[IO[bytes]], T]
    ) -> list[T]:
        """Each request's answer, in order, sent to cat-file a chunk at a time. Chunks keep
        the requests git has yet to read far below the OS pipe buffer, so writing them
        never waits on git while git waits on us to read its answers."""
        out: list[T] = []
        with self._mutex:
            proc = self._batch()
            assert proc.stdin is not None and proc.stdout is not None
            for i in range(0, len(requests), chunk):
                part = requests[i : i + chunk]
                try:
                    proc.stdin.write(b"".join(_request(r) + b"\n" for r in part))
                    proc.stdin.flush()
                    out += [answer(proc.stdout) for _ in part]
                except (BrokenPipeError, OSError) as exc:
                    raise GitFailure(f"git cat-file stopped: {exc}") from exc
        return out

    def peel_tree(self, name: str) -> str | None:
        """The tree of a commit or tree; a full id is immutable, so its answer is kept."""
        if name in self._peeled:
            return self._peeled[name]
        found = self.read(name)
        tree = None
        if found is not None and found[0] == "commit":  # "tree <id>\n" always comes first
            tree = found[1][5 : 5 + 2 * self.width].decode()
        elif found is not None and found[0] == "tree":
            tree = name
        if len(name) == 2 * self.width and all(c in "0123456789abcdef" for c in name):
            if len(self._peeled) > 65536:
                self._peeled.clear()
            self._peeled[name] = tree
        return tree

    def hash(self, typ: str, data: bytes) -> str:
        """The id this repository gives `data` stored as a `typ` object."""
        return object_sha(typ, data, self.algo)

    def write(self, typ: str, data: bytes) -> str:
        sha = object_sha(typ, data, self.algo)
        self._keep(sha, typ, data)
        if self._packing is not None:
            self._packing.setdefault(sha, (typ, data))
            return sha
        return self._write_loose(sha, typ, data)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Objects written inside are stored when it ends: as one pack (`git index-pack`)
        when there are many, one file instead of one per object, else loose. Nothing may
        refer to them from a ref before the block ends; if it raises, none is stored."""
        if self._packing is not None:
            yield  # already inside a batch: the outer one stores
            return
        self._packing = {}
        try:
            yield
            pending = self._packing
        finally:
            self._packing = None
        if len(pending) < PACK_AT:
            for sha, (typ, data) in pending.items():
                self._write_loose(sha, typ, data)
            return
        run(["index-pack", "--stdin"], self.root, input=pack_bytes(pending.values(), self.algo))

    def _write_loose(self, sha: str, typ: str, data: bytes) -> str:
        header = f"{typ} {len(data)}\0".encode()
        path = self.objects / sha[:2] / sha[2:]
        if path.exists():
            return sha
        path.parent.mkdir(exist_ok=True)
        tmp = path.parent / f"tmp_obj_vouch_{os.getpid()}_{threading.get_ident()}"
        with open(tmp, "wb") as fh:
            fh.write(zlib.compress(header + data, 1))
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)  # objects are immutable: a racing writer wrote the same bytes
        return sha

    def _keep(self, sha: str, typ: str, data: bytes) -> None:
        if len(data) > _KEEP_ONE:
            return
        if self._written_bytes + len(data) > _KEEP_ALL:
            self._written.clear()
            self._written_bytes = 0
        self._written[sha] = (typ, data)
        self._written_bytes += len(data)

    def close(self) -> None:
        if self._proc is not None:
            _close(self._proc)
            self._proc = None


def _header(stdout: IO[bytes]) -> tuple[str, str, str] | None:
    """cat-file's answer line (`<sha> <type> <size>`), None for a missing object."""
    line = stdout.readline()
    if not line:
        raise GitFailure("git cat-file stopped unexpectedly")
    return _fields(line)


def _fields(line: bytes) -> tuple[str, str, str] | None:
    """`<sha> <type> <size>` split, or None for any other answer: `<name> missing` or
    `ambiguous`, whatever the name holds (a name with spaces is missing, not a size)."""
    fields = line.split()
    if len(fields) != 3 or not fields[2].isdigit():
        return None
    return fields[0].decode(), fields[1].decode(), fields[2].decode()


def _request(command: str) -> bytes:
    """One cat-file request line. A name holding a newline or NUL would split into
    requests of its own (or be cut at the NUL and name another object): it is sent as
    an empty name instead, which git answers as missing."""
    verb, _, name = command.partition(" ")
    if "\n" in name or "\0" in name or "\r" in name:
        name = ""
    return f"{verb} {name}".encode()


PACK_AT = 256  # objects in one batch from which a pack beats loose files (one process)
_PACK_TYPES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}


def pack_bytes(objects: Iterable[tuple[str, bytes]], algo: str = "sha1") -> bytes:
    """A version 2 pack file holding these (type, content) objects whole (no deltas):
    git's format, which `git index-pack` checks and indexes."""
    parts: list[bytes] = []
    count = 0
    for typ, data in objects:
        size = len(data)
        byte = (_PACK_TYPES[typ] << 4) | (size & 0x0F)
        size >>= 4
        head = bytearray()
        while size:
            head.append(byte | 0x80)
            byte = size & 0x7F
            size >>= 7
        head.append(byte)
        parts += (bytes(head), zlib.compress(data, 1))
        count += 1
    body = b"".join([b"PACK", struct.pack(">II", 2, count), *parts])
    return body + hashlib.new(algo, body).digest()


_KEEP_ONE = 1 << 20  # objects this process wrote, kept for reading back: each at most
_KEEP_ALL = 64 << 20  # 1 MiB, 64 MiB in all


def object_sha(typ: str, data: bytes, algo: str = "sha1") -> str:
    """The id git gives `data` stored as a `typ` object (what `hash-object` prints) in a
    repository whose object format is `algo`. Callers with a repository at hand use
    `ObjectStore.hash`, which knows the format."""
    digest = hashlib.new(algo, f"{typ} {len(data)}\0".encode())
    digest.update(data)
    return digest.hexdigest()


def _close(proc: subprocess.Popen[bytes]) -> None:
    try:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=5)
    except Exception:  # best effort at interpreter exit
        proc.kill()


def parse_tree(data: bytes, width: int = 20) -> list[tuple[str, str, str, str]]:
    """A raw tree object as (mode, type, sha, name) rows, modes as ls-tree prints them."""
    rows = []
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        mode = data[pos:space].decode()
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        sha = data[nul + 1 : nul + 1 + width].hex()
        pos = nul + 1 + width
        typ = "tree" if mode == "40000" else "commit" if mode == "160000" else "blob"
        rows.append((mode.zfill(6), typ, sha, name))
    return rows


def format_tree(entries: Iterable[tuple[str, str, str, str]]) -> bytes:
    """Raw tree bytes in git's order (a directory sorts as if its name ended in `/`)."""

    def key(entry: tuple[str, str, str, str]) -> bytes:
        name = entry[3].encode("utf-8", "surrogateescape")
        return name + b"/" if entry[1] == "tree" else name

    out = bytearray()
    for mode, _typ, sha, name in sorted(entries, key=key):
        out += mode.lstrip("0").encode() + b" " + name.encode("utf-8", "surrogateescape")
        out += b"\0" + bytes.fromhex(sha)
    return bytes(out)
