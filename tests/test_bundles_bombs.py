"""Bundles read in bounded memory (issue 34, finding 9: an 11 MiB bundle took 4.2 GB
of memory before it was refused; a 6 MiB one unpacking to 1.5 GiB took 3.2 GB and
14 s). Each bomb is built here as an attacker would, byte by byte (gzip and tar
headers written by hand where the tools refuse to lie), then `vouch import-apply` runs
on it in a process of its own: it is refused at once (exit 1, E102, naming the limit),
nothing is written, and the process's peak resident memory
(`getrusage(RUSAGE_CHILDREN).ru_maxrss`) stays under 200 MB."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
import tarfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git
from index_support import release_knowledge

from vouch.bundle.archive import _header
from vouch.bundle.reading import DEFAULT_UNPACKED_MB, MB
from vouch.kinds import KINDS
from vouch.store.kb import KB, path_for

GiB = 1 << 30
RSS_LIMIT_KB = 200 * 1024
BOMB = 3 * GiB // 2  # what the bundle of finding 9 unpacked to
WHERE = str(Path(__file__).resolve().parents[1])
MEASURE = r"""
import json, resource, subprocess, sys, time
started = time.monotonic()
ran = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({
    "code": ran.returncode, "out": ran.stdout, "err": ran.stderr,
    "seconds": time.monotonic() - started,
    "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
}))
"""


def _gzip(pieces: Iterator[bytes]) -> bytes:
    """A single gzip member of `pieces`, with a correct trailer; a run of identical
    pieces after a full flush is compressed once and repeated (deflate's full flush
    makes what follows independent of what came before), so a gigabyte costs
    milliseconds."""
    out = bytearray(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    crc, size = 0, 0
    made: dict[bytes, bytes] = {}
    for piece in pieces:
        crc, size = zlib.crc32(piece, crc), size + len(piece)
        if piece in made:
            out += made[piece]
            continue
        block = deflate.compress(piece) + deflate.flush(zlib.Z_FULL_FLUSH)
        if len(piece) >= MB:
            made[piece] = block  # the next copy compresses to these same bytes
        out += block
    out += deflate.flush(zlib.Z_FINISH)
    out += struct.pack("<II", crc, size & 0xFFFFFFFF)
    return bytes(out)


def _zeros(n: int) -> Iterator[bytes]:
    chunk = bytes(MB)
    for _ in range(n // MB):
        yield chunk
    if n % MB:
        yield bytes(n % MB)


def _manifest(entries: list[dict[str, object]]) -> bytes:
    from vouch.bundle import content_digest

    data = {
        "format": "vouch-bundle",
        "version": 1,
        "generated_at": "2026-01-01T00:00:00Z",
        "vouch_version": "0.1.0",
        "source_commit": "0" * 40,
        "content_sha256": content_digest(entries),
        "files": entries,
    }
    return json.dumps(data, indent=1, sort_keys=True).encode()


def _member(name: str, body: bytes) -> bytes:
    return _header(name, len(body), 0) + body + bytes(-len(body) % tarfile.BLOCKSIZE)


def _claim_path(n: int) -> str:
    return path_for(KINDS["claim"], f"bomb-{n:08x}")


def _sha_of_zeros(n: int) -> str:
    digest = hashlib.sha256()
    for piece in _zeros(n):
        digest.update(piece)
    return digest.hexdigest()


def one_huge_member(tmp: Path) -> Path:
    """A member of 1.5 GiB of zeros, declared truthfully and listed in the manifest."""
    name = "audit.log.jsonl"
    manifest = _manifest([{"path": name, "sha256": "0" * 64, "bytes": BOMB}])

    def pieces() -> Iterator[bytes]:
        yield _member("manifest.json", manifest) + _header(name, BOMB, 0)
        yield from _zeros(BOMB)
        yield bytes(2 * tarfile.BLOCKSIZE)

    return _write(tmp / "huge-member.tar.gz", _gzip(pieces()))


MEMBERS = 5000  # the test's limit (the default, 100000, refuses the same way: 61 MB, 13 s)


def many_members(tmp: Path) -> Path:
    """More members than the limit (each a small claim file), listed in the manifest."""
    count = MEMBERS + 10
    body = b"x\n"
    entries = [
        {"path": _claim_path(n), "sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)}
        for n in range(count)
    ]
    entries.sort(key=lambda e: str(e["path"]))

    def pieces() -> Iterator[bytes]:
        yield _member("manifest.json", _manifest(entries))
        for entry in entries:
            yield _member(str(entry["path"]), body)
        yield bytes(2 * tarfile.BLOCKSIZE)

    return _write(tmp / "many-members.tar.gz", _gzip(pieces()))


def lying_header(tmp: Path) -> Path:
    """A manifest whose header says 512 bytes, then 1.5 GiB of zeros: to a tar reader
    the end of the archive and then padding, to an inflater 1.5 GiB."""
    manifest = _manifest([])

    def pieces() -> Iterator[bytes]:
        yield _member("manifest.json", manifest)
        yield from _zeros(BOMB)

    return _write(tmp / "lying-header.tar.gz", _gzip(pieces()))


def huge_extension_header(tmp: Path) -> Path:
    """A PAX extended header (the tar's own metadata for the next member) that declares
    1.5 GiB, which a tar reader reads whole before the member it describes."""
    head = bytearray(_header("PaxHeaders/x", BOMB, 0))
    head[156:157] = b"x"  # type: a PAX extended header
    head[148:156] = b"        "
    head[148:155] = b"%06o\0" % sum(head)

    def pieces() -> Iterator[bytes]:
        yield bytes(head)
        yield from _zeros(BOMB)

    return _write(tmp / "pax-header.tar.gz", _gzip(pieces()))


def nested_archive(tmp: Path) -> Path:
    """A bundle whose one file is itself a gzip bomb: bytes, never unpacked."""
    inner = _gzip(_zeros(GiB))
    name = "audit.log.jsonl"
    manifest = _manifest(
        [{"path": name, "sha256": hashlib.sha256(inner).hexdigest(), "bytes": len(inner)}]
    )
    archive = _member("manifest.json", manifest) + _member(name, inner) + bytes(1024)
    return _write(tmp / "nested.tar.gz", _gzip(iter([archive])))


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


BOMBS = {
    "one member of 1.5 GiB of zeros": (one_huge_member, "declare more than"),
    "more members than the limit": (many_members, f"more than {MEMBERS} members"),
    "a header that lies about its size": (lying_header, "unpacks to more than"),
    "an extension header of 1.5 GiB": (huge_extension_header, "unpacks to more than"),
}


def _state(kb: KB) -> tuple[str, str, str]:
    return (
        git(kb.root, "rev-parse", "HEAD"),
        git(kb.root, "for-each-ref"),
        git(kb.root, "status", "--porcelain", "--untracked-files=all", "--ignored"),
    )


def _measured(kb: KB, *args: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": WHERE, "VOUCH_NO_WARM": "1"}
    ran = subprocess.run(
        [sys.executable, "-c", MEASURE, sys.executable, "-m", "vouch", *args],
        cwd=kb.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    result: dict[str, object] = json.loads(ran.stdout)
    return result


@pytest.fixture
def small(kb: KB) -> KB:
    return release_knowledge(kb)


@pytest.mark.parametrize("what", sorted(BOMBS))
def test_a_bundle_bomb_is_refused_at_once_in_bounded_memory(
    small: KB, tmp_path: Path, what: str
) -> None:
    build, expected = BOMBS[what]
    path = build(tmp_path)
    assert path.stat().st_size < 16 * MB  # a small file, as in the finding
    config = small.dir / "config.yaml"
    config.write_text(config.read_text() + f"bundle:\n  max_members: {MEMBERS}\n")
    git(small.root, "commit", "-qam", "bundle limits")
    before = _state(small)
    verbs = ("import-apply", "import-check", "export-check") if "1.5 GiB of" in what else ()
    for verb in verbs or ("import-apply",):
        ran = _measured(small, verb, str(path), "--json")
        print(f"{what}: vouch {verb}: {ran['maxrss_kb']} KB peak, {ran['seconds']:.2f} s")
        assert ran["code"] == 1 and "Traceback" not in str(ran["err"]), ran
        if verb == "export-check":
            report = json.loads(str(ran["out"]))
            assert report["ok"] is False and expected in " ".join(report["issues"]), report
        else:
            error = json.loads(str(ran["out"]))["error"]
            assert error["code"] == "E102" and expected in error["message"], error
            assert "nothing was written" in error["message"]
        assert int(str(ran["maxrss_kb"])) < RSS_LIMIT_KB, ran["maxrss_kb"]
        assert float(str(ran["seconds"])) < 30, ran["seconds"]  # the finding: 14 s, 3.2 GB
    assert _state(small) == before


def test_a_nested_archive_is_bytes_never_unpacked(small: KB, tmp_path: Path) -> None:
    """A file of the bundle that is itself a gzip bomb is checked as bytes (here: not
    an audit log), never unpacked."""
    path = nested_archive(tmp_path)
    before = _state(small)
    ran = _measured(small, "import-apply", str(path), "--json")
    print(f"nested: {ran['maxrss_kb']} KB peak, {ran['seconds']:.2f} s")
    assert ran["code"] == 1 and "Traceback" not in str(ran["err"]), ran
    assert json.loads(str(ran["out"]))["error"]["code"] == "E102"
    assert int(str(ran["maxrss_kb"])) < RSS_LIMIT_KB
    assert _state(small) == before


def test_the_limits_come_from_the_configuration(small: KB, tmp_path: Path) -> None:
    """`bundle.max_members` and `bundle.max_unpacked_mb` in config.yaml: a bundle the
    defaults take is refused under a lower limit, naming the setting; nothing written."""
    out = tmp_path / "kb.tar.gz"
    made = _measured(small, "export", "--out", str(out), "--json")
    assert made["code"] == 0, made
    target = tmp_path / "target"
    target.mkdir()
    git(target, "init", "-q")
    from vouch.store.initkb import init_kb

    init_kb(target)
    other = KB.open(None, str(target / ".vouch"))
    config = other.dir / "config.yaml"
    text = config.read_text()
    checked = _measured(other, "export-check", str(out), "--json")
    assert checked["code"] == 0, checked  # the defaults take it
    config.write_text(text + "bundle:\n  max_members: 2\n")
    before = _state(other)
    ran = _measured(other, "import-apply", str(out), "--json")
    error = json.loads(str(ran["out"]))["error"]
    assert error["code"] == "E102" and "more than 2 members (bundle.max_members" in error["message"]
    assert _state(other) == before


def test_a_bundle_at_the_limit_is_read_in_bounded_memory(small: KB, tmp_path: Path) -> None:
    """The largest bundle the defaults let through to the content check (its members'
    bytes just under the limit, each listed with its right size and sha256) costs its
    bytes in memory once, not twice or thrice: under 200 MB."""
    size = DEFAULT_UNPACKED_MB * MB - 64 * 1024
    name = "audit.log.jsonl"
    manifest = _manifest([{"path": name, "sha256": _sha_of_zeros(size), "bytes": size}])

    def pieces() -> Iterator[bytes]:
        yield _member("manifest.json", manifest) + _header(name, size, 0)
        yield from _zeros(size)
        yield bytes(-size % tarfile.BLOCKSIZE) + bytes(2 * tarfile.BLOCKSIZE)

    path = _write(tmp_path / "at-the-limit.tar.gz", _gzip(pieces()))
    before = _state(small)
    started = time.monotonic()
    ran = _measured(small, "import-apply", str(path), "--json")
    print(f"at the limit: {ran['maxrss_kb']} KB peak, {time.monotonic() - started:.2f} s")
    assert ran["code"] == 1 and json.loads(str(ran["out"]))["error"]["code"] == "E102"
    assert int(str(ran["maxrss_kb"])) < RSS_LIMIT_KB, ran["maxrss_kb"]
    assert _state(small) == before
