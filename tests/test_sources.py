from pathlib import Path

from conftest import git

from vouch.core.ids import sha256_hex
from vouch.kinds import source
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.kb import KB


def test_source_add_prints_id_and_commits(kb: KB, run_cli) -> None:
    doc = kb.root / "notes.md"
    doc.write_text("# Notes\n\nbody\n")
    res = run_cli("source", "add", str(doc), "--tags", "a,b", "--title", "My notes", cwd=kb.root)
    assert res.code == 0, res.err
    sid = sha256_hex(doc.read_bytes())
    assert res.out == f'{sid[:12]}  notes.md  "My notes"\n'  # id (12 digits), path, title
    meta = kb.read(source.KIND, sid)
    assert meta["title"] == "My notes" and meta["tags"] == ["a", "b"]
    assert meta["locator"] == "notes.md"
    assert (kb.dir / source.content_path_for(sid, "text/markdown")).read_bytes() == doc.read_bytes()
    assert kb.source_content(sid) == doc.read_bytes()
    assert git(kb.root, "status", "--porcelain", ".vouch") == ""
    assert "source.register" in (kb.dir / "audit.log.jsonl").read_text()


def test_readding_identical_bytes_is_idempotent(kb: KB, run_cli) -> None:
    doc = kb.root / "a.txt"
    doc.write_text("same\n")
    first = run_cli("source", "add", str(doc), "--json", cwd=kb.root).json()
    head = git(kb.root, "rev-parse", "HEAD")
    second = run_cli("source", "add", str(doc), "--json", cwd=kb.root).json()
    shown = {"locator": "a.txt", "title": "a.txt"}
    assert first == {"id": first["id"], "deduplicated": False, **shown}
    assert second == {"id": first["id"], "deduplicated": True, **shown}
    again = run_cli("source", "add", str(doc), cwd=kb.root)
    assert again.out == f"{first['id'][:12]}  a.txt  (already present)\n"
    assert git(kb.root, "rev-parse", "HEAD") == head


def test_source_from_stdin(kb: KB, run_cli) -> None:
    res = run_cli("source", "add", "-", "--title", "piped", cwd=kb.root, input="from a pipe\n")
    assert res.code == 0, res.err
    sid = sha256_hex(b"from a pipe\n")
    assert res.out == f'{sid[:12]}  stdin  "piped"\n'
    assert kb.read(source.KIND, sid)["locator"] == "stdin"


def test_recursive_add_is_one_commit(kb: KB, run_cli, tmp_path: Path) -> None:
    folder = kb.root / "docs"  # sources are confined to the repository
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("a\n")
    (folder / "sub" / "b.txt").write_text("b\n")
    (folder / ".hidden").write_text("h\n")
    before = int(git(kb.root, "rev-list", "--count", "HEAD"))
    res = run_cli("source", "add", str(folder), "--recursive", cwd=kb.root)
    assert res.code == 0, res.err
    assert sorted(line.split()[1] for line in res.out.splitlines()) == [
        "docs/a.md",
        "docs/sub/b.txt",
    ]
    assert int(git(kb.root, "rev-list", "--count", "HEAD")) == before + 1
    assert kb.count(source.KIND) == 2


def test_directory_without_recursive_is_a_clear_error(kb: KB, run_cli, tmp_path: Path) -> None:
    res = run_cli("source", "add", str(tmp_path), cwd=kb.root)
    assert res.code == 1 and "--recursive" in res.err


def test_a_folder_named_from_outside_the_repository_is_found_in_it(
    kb: KB, run_cli, tmp_path: Path
) -> None:
    (kb.root / "docs").mkdir()
    (kb.root / "docs" / "a.md").write_text("# A\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    res = run_cli("source", "add", "docs", "--kb", str(kb.root), cwd=elsewhere)
    assert res.code == 1 and "E100" in res.err and "--recursive" in res.err, res.err
    res = run_cli("source", "add", "docs", "-r", "--kb", str(kb.root), cwd=elsewhere)
    assert res.code == 0 and res.out.split()[1] == "docs/a.md", res.err


def test_missing_file_changes_nothing(kb: KB, run_cli) -> None:
    head = git(kb.root, "rev-parse", "HEAD")
    res = run_cli("source", "add", "nope.txt", cwd=kb.root)
    assert res.code == 1 and "E101" in res.err
    assert git(kb.root, "rev-parse", "HEAD") == head


def test_register_source_methods_behave_the_same(kb: KB) -> None:
    ctx = CallContext(kb_path=str(kb.root))
    a = ops.invoke(ctx, "kb.register_source", {"content": "hello\n", "locator": "chat:1"})
    assert a == {
        "id": sha256_hex(b"hello\n"),
        "deduplicated": False,
        "locator": "chat:1",
        "title": None,
    }
    (kb.root / "hello.txt").write_text("hello\n")
    b = ops.invoke(ctx, "kb.register_source_from_path", {"path": "hello.txt"})
    assert b == {"id": a["id"], "deduplicated": True, "locator": "hello.txt", "title": "hello.txt"}
    (kb.root / "other.txt").write_text("other\n")
    c = ops.invoke(ctx, "kb.register_source_from_path", {"path": str(kb.root / "other.txt")})
    assert c["deduplicated"] is False


def test_source_add_leaves_the_users_index_alone(kb: KB, run_cli) -> None:
    (kb.root / "wip.txt").write_text("work in progress\n")
    git(kb.root, "add", "wip.txt")
    (kb.root / "README.md").write_text("changed\n")
    doc = kb.root / "doc.txt"
    doc.write_text("doc\n")
    run_cli("source", "add", str(doc), cwd=kb.root)
    assert "wip.txt" not in git(kb.root, "show", "--stat", "HEAD")
    status = git(kb.root, "status", "--porcelain")
    assert "A  wip.txt" in status and " M README.md" in status and ".vouch" not in status


def test_direct_commits_close_audit_segments_and_the_chain_verifies(
    kb: KB, run_cli, monkeypatch
) -> None:
    from vouch.store import audit

    monkeypatch.setattr(audit, "SEGMENT_BYTES", 600)
    for n in range(6):
        (kb.root / f"f{n}.txt").write_text(f"file {n}\n")
        assert run_cli("source", "add", f"f{n}.txt", cwd=kb.root).code == 0
    segments = sorted((kb.dir / audit.SEGMENT_DIR).iterdir())
    assert segments, "the active log should have been closed into a segment"
    assert (kb.dir / audit.LOG_NAME).stat().st_size < 600 + 1000
    assert git(kb.root, "status", "--porcelain", ".vouch") == ""
    res = run_cli("audit", "--verify", "--json", cwd=kb.root)
    assert res.code == 0, res.out + res.err
    events = run_cli("audit", "--json", cwd=kb.root).json()
    assert sum(1 for e in events if e["event"] == "source.register") == 6


def test_a_hand_edited_audit_log_is_never_committed_by_a_direct_write(kb: KB, run_cli) -> None:
    from vouch.store import audit

    log = kb.dir / audit.LOG_NAME
    (kb.root / "a.txt").write_text("a\n")
    head = git(kb.root, "rev-parse", "HEAD")
    edited = log.read_bytes() + b'{"hand": "edit"}\n'
    log.write_bytes(edited)
    res = run_cli("source", "add", "a.txt", cwd=kb.root)
    assert res.code == 1 and "E105" in res.err
    assert git(kb.root, "rev-parse", "HEAD") == head and log.read_bytes() == edited
    log.unlink()  # deleting the log would drop every event in it: refused too
    assert run_cli("source", "add", "a.txt", cwd=kb.root).code == 1
    assert git(kb.root, "rev-parse", "HEAD") == head
    # restored, the next write goes through
    git(kb.root, "checkout", "--", ".vouch")
    assert run_cli("source", "add", "a.txt", cwd=kb.root).code == 0
    assert git(kb.root, "status", "--porcelain", ".vouch") == ""
    assert run_cli("audit", "--verify", cwd=kb.root).code == 0


def test_fifos_and_devices_are_refused_not_read_forever(kb: KB, run_cli, tmp_path: Path) -> None:
    import os

    folder = kb.root / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("a\n")
    os.mkfifo(folder / "pipe")  # reading it would block forever
    res = run_cli("source", "add", str(folder), "--recursive", "--json", cwd=kb.root)
    assert res.code == 0 and len(res.json()["items"]) == 1, res.err
    head = git(kb.root, "rev-parse", "HEAD")
    for target in (str(folder / "pipe"), "/dev/zero"):
        res = run_cli("source", "add", target, "--allow-outside", cwd=kb.root)
        assert res.code == 1 and "not a regular file" in res.err
    assert git(kb.root, "rev-parse", "HEAD") == head


def test_a_non_numeric_lock_timeout_is_a_named_usage_error(kb: KB, run_cli) -> None:
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace("timeout_seconds: 30", "timeout_seconds: soon"))
    assert "soon" in config.read_text()
    (kb.root / "a.txt").write_text("a\n")
    for args in (["source", "add", "a.txt"], ["propose-entity", "--name", "n", "--type", "system"]):
        res = run_cli(*args, cwd=kb.root)
        assert res.code == 1 and "lock.timeout_seconds" in res.err, res.err


def test_endless_standard_input_is_refused_past_the_limit(kb: KB) -> None:
    """The second outsider's finding: `vouch source add - < /dev/zero` read standard input
    whole (8.9 GB in 30 s) before checking sources.max_bytes. It reads one byte past the
    limit and stops."""
    import json
    import subprocess
    import sys

    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace("max_bytes: 52428800", "max_bytes: 1000000"))
    assert "max_bytes: 1000000" in config.read_text()
    before = git(kb.root, "rev-parse", "HEAD")
    # measured by a small intermediate process: a child forked from this test worker
    # would count the worker's own pages as its peak
    script = (
        "import json, resource, subprocess, sys\n"
        "p = subprocess.run([sys.executable, '-m', 'vouch', 'source', 'add', '-'],"
        " stdin=sys.stdin, capture_output=True, text=True)\n"
        "print(json.dumps({'code': p.returncode, 'err': p.stderr,"
        " 'maxrss': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
    )
    with open("/dev/zero", "rb") as zero:
        out = subprocess.run(
            [sys.executable, "-c", script],
            cwd=kb.root,
            stdin=zero,
            capture_output=True,
            text=True,
            timeout=60,
        )
    found = json.loads(out.stdout)
    assert found["code"] == 1 and "E110" in found["err"], found
    assert "more than 1000000" in found["err"]
    assert found["maxrss"] < 400_000  # KiB
    assert git(kb.root, "rev-parse", "HEAD") == before
