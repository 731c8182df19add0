"""A bundle's manifest is bounded before it is parsed (issue 34, finding G9: a 46 KB
bundle whose manifest.json is 46 MB of `[{},{},...]`, under the manifest's size cap,
took 1.25 GB of memory in `vouch import-check`, `export-check` and `import-apply`, and
was refused only after the whole parse). Each manifest is built here as an attacker
would, then the command runs in a process of its own: refused at once (exit 1, E102 or
a failed check naming `bundle.max_members`), nothing written, and its peak resident
memory (`getrusage(RUSAGE_CHILDREN).ru_maxrss`) under 200 MB. Over JSONL,
`kb.import_check` refuses the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_bundles_bombs import (
    RSS_LIMIT_KB,
    WHERE,
    _claim_path,
    _gzip,
    _measured,
    _member,
    _state,
    small,
)

from vouch.bundle.archive import _header
from vouch.bundle.reading import MB
from vouch.store.kb import KB

__all__ = ["small"]  # the fixture, shared with the other bombs

SIZE = 46 * MB  # the finding's manifest: under the cap (100000 members x 512 bytes)

# what a manifest repeats: empty objects (the finding), short strings, numbers
VALUES = {
    "empty objects": b"{},",
    "short strings": b'"ab",',
    "numbers": b"1.5,",
}


def manifest_bomb(tmp: Path, value: bytes) -> Path:
    """manifest.json of `[value, value, ...]` (SIZE bytes), alone in the bundle; the
    repeated piece compresses once, so the file is a few tens of KB."""
    piece = value * (MB // len(value) + 1)
    count = SIZE // len(piece)
    size = 1 + count * len(piece) + 3

    def pieces() -> Iterator[bytes]:
        yield _header("manifest.json", size, 0) + b"["
        for _ in range(count):
            yield piece
        yield b"{}]" + bytes(-size % tarfile.BLOCKSIZE) + bytes(2 * tarfile.BLOCKSIZE)

    path = tmp / "manifest-bomb.tar.gz"
    path.write_bytes(_gzip(pieces()))
    return path


def many_members_and_values(tmp: Path, members: int) -> Path:
    """`members` small claim files, and a manifest inside the size those may need
    (512 bytes each) that is `[{},{},...]`: millions of values for thousands of files."""
    size = members * 512 - 4
    body = b"[" + b"{}," * (size // 3) + b"{}]"

    def pieces() -> Iterator[bytes]:
        yield _member("manifest.json", body)
        yield b"".join(_member(_claim_path(n), b"x\n") for n in range(members))
        yield bytes(2 * tarfile.BLOCKSIZE)

    path = tmp / "many-values.tar.gz"
    path.write_bytes(_gzip(pieces()))
    return path


@pytest.mark.parametrize("what", sorted(VALUES))
def test_a_manifest_of_many_values_is_refused_before_it_is_parsed(
    small: KB, tmp_path: Path, what: str
) -> None:
    path = manifest_bomb(tmp_path, VALUES[what])
    assert path.stat().st_size < 256 * 1024  # a small file, as in the finding
    before = _state(small)
    for verb in ("import-check", "export-check", "import-apply"):
        ran = _measured(small, verb, str(path), "--json")
        print(f"{what}: vouch {verb}: {ran['maxrss_kb']} KB peak, {ran['seconds']:.2f} s")
        assert ran["code"] == 1 and "Traceback" not in str(ran["err"]), ran
        if verb == "export-check":
            report = json.loads(str(ran["out"]))
            message = " ".join(report["issues"])
            assert report["ok"] is False, report
        else:
            error = json.loads(str(ran["out"]))["error"]
            message = error["message"]
            assert error["code"] == "E102" and "nothing was written" in message, error
        assert "bundle.max_members" in message, message
        assert int(str(ran["maxrss_kb"])) < RSS_LIMIT_KB, ran["maxrss_kb"]
    assert _state(small) == before


def test_a_manifest_bomb_over_jsonl_is_refused_in_bounded_memory(small: KB, tmp_path: Path) -> None:
    """`kb.import_check` over a JSONL server: the same refusal, the same bound."""
    path = manifest_bomb(tmp_path, VALUES["empty objects"]).rename(small.root / "in.tar.gz")
    before = _state(small)  # an agent reaches only files in the repository
    env = {**os.environ, "PYTHONPATH": WHERE, "VOUCH_NO_WARM": "1", "VOUCH_AGENT": "bot"}
    request = {"id": 1, "method": "kb.import_check", "params": {"path": str(path)}}
    measure = (
        "import json, resource, subprocess, sys\n"
        "ran = subprocess.run(sys.argv[1:], input=sys.stdin.read(), capture_output=True,"
        " text=True)\n"
        "print(json.dumps({'out': ran.stdout, 'err': ran.stderr,"
        " 'maxrss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
    )
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            measure,
            sys.executable,
            "-m",
            "vouch",
            "serve",
            "--transport",
            "jsonl",
        ],
        cwd=small.root,
        env=env,
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    result = json.loads(ran.stdout)
    print(f"jsonl kb.import_check: {result['maxrss_kb']} KB peak")
    assert "Traceback" not in result["err"], result
    reply = json.loads(result["out"].splitlines()[-1])
    assert reply["error"]["vouch_code"] == "E102", reply
    assert "bundle.max_members" in reply["error"]["message"], reply
    assert int(result["maxrss_kb"]) < RSS_LIMIT_KB, result["maxrss_kb"]
    assert _state(small) == before


def test_a_manifest_within_its_size_is_bounded_by_its_values(small: KB, tmp_path: Path) -> None:
    """20000 members let the manifest be 10 MB; as `[{},{},...]` that is 3.4 million
    values (over 250 MB parsed), where 20000 file entries need 160000: refused by the
    count, before the parse."""
    path = many_members_and_values(tmp_path, 20_000)
    before = _state(small)
    ran = _measured(small, "import-check", str(path), "--json")
    print(f"many values: vouch import-check: {ran['maxrss_kb']} KB peak, {ran['seconds']:.2f} s")
    assert ran["code"] == 1 and "Traceback" not in str(ran["err"]), ran
    error = json.loads(str(ran["out"]))["error"]
    assert error["code"] == "E102", error
    assert "JSON values" in error["message"] and "bundle.max_members" in error["message"]
    assert int(str(ran["maxrss_kb"])) < RSS_LIMIT_KB, ran["maxrss_kb"]
    assert _state(small) == before
