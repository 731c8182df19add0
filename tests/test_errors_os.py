"""Operating-system failures get stable codes, and files honour the umask (issue 10).

Permission denied (E204), disk full (E205) and an unusable path (E109) come from real
OS errors where the machine allows: a directory made read-only (as root, the process
first gives up the capability that lets root ignore permissions), a tiny tmpfs in a
private mount namespace, /dev/full.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git
from servers_support import kb_state

from vouch.core.ids import sha256_hex
from vouch.errors import DiskFull, InvalidPath, PermissionDenied, from_os_error
from vouch.kinds import source
from vouch.store.kb import KB

AGENT = {"VOUCH_AGENT": "some-agent"}
_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


# -- the mapping, from errors the OS really raised -------------------------------------------


def test_disk_full_from_dev_full() -> None:
    with pytest.raises(OSError) as raised, open("/dev/full", "wb", buffering=0) as fh:
        fh.write(b"x")
    err = from_os_error(raised.value, "/dev/full")
    assert isinstance(err, DiskFull) and err.code == "E205" and err.exit_code == 2
    assert "/dev/full" in err.message and "free some disk space" in str(err)


def test_nul_byte_and_overlong_names_are_invalid_paths() -> None:
    with pytest.raises(ValueError) as nul:
        os.stat("a\0b")
    err = from_os_error(nul.value)
    assert isinstance(err, InvalidPath) and err.code == "E109" and err.exit_code == 1
    with pytest.raises(OSError) as long:
        os.stat("x" * 5000)
    assert long.value.errno == errno.ENAMETOOLONG
    assert isinstance(from_os_error(long.value), InvalidPath)


def test_permission_errors_name_the_path_and_unrelated_errors_are_left_alone() -> None:
    for code in (errno.EACCES, errno.EPERM, errno.EROFS):
        err = from_os_error(PermissionError(code, os.strerror(code), "/srv/kb/.vouch/x"))
        assert isinstance(err, PermissionDenied) and err.code == "E204"
        assert err.exit_code == 2 and "/srv/kb/.vouch/x" in err.message
    assert from_os_error(FileExistsError(errno.EEXIST, "exists", "x")) is None
    assert from_os_error(ValueError("not a path")) is None
    assert from_os_error(KeyError("k")) is None


# -- end to end ---------------------------------------------------------------------------


def _drop_root_powers() -> None:
    """In the child before exec: without these capabilities root obeys file modes."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _unprivileged() -> Callable[[], None] | None:
    if os.geteuid() != 0:
        return None
    probe = subprocess.run(["true"], preexec_fn=_drop_root_powers, check=False)
    if probe.returncode != 0:  # pragma: no cover - depends on the container
        pytest.skip(
            "running as root without CAP_SETPCAP: cannot give up the power to "
            "ignore file permissions, so no permission can be denied"
        )
    return _drop_root_powers


def _vouch(
    root: Path,
    *args: str,
    preexec: Callable[[], None] | None = None,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "vouch", *args],
        cwd=root,
        input=input,
        capture_output=True,
        preexec_fn=preexec,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


@pytest.fixture
def read_only_sources(kb: KB):
    (kb.root / "doc.txt").write_text("a document\n")
    sources_dir = kb.dir / "sources"
    sources_dir.mkdir()
    sources_dir.chmod(0o555)
    yield sources_dir
    sources_dir.chmod(0o755)


def test_permission_denied_at_the_cli(kb: KB, read_only_sources: Path) -> None:
    before = kb_state(kb.root)
    done = _vouch(kb.root, "source", "add", "doc.txt", preexec=_unprivileged())
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "error[E204]: permission denied" in err and str(read_only_sources) in err
    assert "Traceback" not in err
    assert kb_state(kb.root) == before and list(read_only_sources.iterdir()) == []


def test_permission_denied_over_jsonl(kb: KB, read_only_sources: Path) -> None:
    before = kb_state(kb.root)
    request = {"id": 1, "method": "kb.register_source_from_path", "params": {"path": "doc.txt"}}
    done = _vouch(
        kb.root,
        "serve",
        "--transport",
        "jsonl",
        preexec=_unprivileged(),
        input=json.dumps(request).encode() + b"\n",
        env=AGENT,
    )
    [line] = done.stdout.splitlines()
    response = json.loads(line)
    assert not response["ok"], response
    assert response["error"]["vouch_code"] == "E204"
    assert response["error"]["code"] == "internal_error"
    assert str(read_only_sources) in response["error"]["message"]
    assert kb_state(kb.root) == before and list(read_only_sources.iterdir()) == []


def test_disk_full_at_the_cli(kb: KB) -> None:
    unshare = shutil.which("unshare")
    probe = ["--mount", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"]
    if unshare is None or subprocess.run([unshare, *probe], capture_output=True).returncode:
        pytest.skip(
            "no private mount namespace here (needs unshare and CAP_SYS_ADMIN) to "
            "fill a tiny tmpfs; the mapping is tested with /dev/full above"
        )
    (kb.root / "big.txt").write_bytes(b"x" * 256 * 1024)
    (kb.dir / "sources").mkdir()
    before = kb_state(kb.root)
    # the tmpfs lives only in the child's mount namespace, over .vouch/sources
    script = 'mount -t tmpfs -o size=16k tmpfs "$0/.vouch/sources" && exec "$@"'
    done = subprocess.run(
        [
            unshare,
            "--mount",
            "sh",
            "-c",
            script,
            str(kb.root),
            sys.executable,
            "-m",
            "vouch",
            "source",
            "add",
            "big.txt",
        ],
        cwd=kb.root,
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "error[E205]: no space left" in err and "Traceback" not in err
    assert git(kb.root, "rev-parse", "HEAD") == before[0]
    assert list((kb.dir / "sources").iterdir()) == []  # the tmpfs went with its namespace


def test_a_nul_byte_in_a_path_is_an_invalid_path(kb: KB, run_cli) -> None:
    before = kb_state(kb.root)
    for args in (["a\0b.txt"], ["--allow-outside", "/tmp/a\0b"], ["--recursive", "d\0r"]):
        res = run_cli("source", "add", *args, cwd=kb.root)
        assert res.code == 1, res.err
        assert "error[E109]" in res.err and "NUL byte" in res.err and "Traceback" not in res.err
    res = run_cli("source", "add", "a\0b.txt", "--json", cwd=kb.root)
    assert json.loads(res.out)["error"]["code"] == "E109"
    assert kb_state(kb.root) == before


def test_a_nul_byte_over_jsonl_is_an_invalid_request(kb: KB) -> None:
    request = {
        "id": 1,
        "method": "kb.register_source_from_path",
        "params": {"path": "doc\u0000.txt"},
    }
    done = _vouch(
        kb.root,
        "serve",
        "--transport",
        "jsonl",
        input=json.dumps(request).encode() + b"\n",
        env=AGENT,
    )
    response = json.loads(done.stdout.splitlines()[0])
    assert response["error"]["vouch_code"] == "E109"
    assert response["error"]["code"] == "invalid_request"


# -- file modes ---------------------------------------------------------------------------


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_knowledge_files_honour_the_umask(kb: KB, umask: int, mode: int) -> None:
    (kb.root / "doc.txt").write_text("a document\n")
    done = subprocess.run(
        [sys.executable, "-m", "vouch", "source", "add", "doc.txt"],
        cwd=kb.root,
        capture_output=True,
        umask=umask,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    sid = sha256_hex(b"a document\n")
    for path in (kb.dir / source.path_for(sid), kb.source_content_path(sid)):
        assert path is not None and stat.S_IMODE(path.stat().st_mode) == mode, path
    leftovers = [p for p in (kb.dir / "sources").rglob("*.tmp")]
    assert leftovers == [] and git(kb.root, "status", "--porcelain", ".vouch") == ""


def test_write_atomic_honours_the_umask_in_process(tmp_path: Path) -> None:
    from vouch.core import fsio

    old = os.umask(0o002)
    try:
        fsio.write_atomic(tmp_path / "a" / "f.yaml", "x: 1\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a" / "f.yaml").stat().st_mode) == 0o664
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["f.yaml"]
