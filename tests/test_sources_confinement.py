"""Sources stay inside the repository's work tree (issue 10, DESIGN §4.1).

Each attack is built as an agent or a careless script would build it, over the real JSONL
server or the CLI, and must be refused with nothing written: HEAD, the refs, the work
tree and every file under `.vouch/` exactly as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import git
from servers_support import JsonlServer, kb_state

from vouch.errors import OutsideRepository
from vouch.kinds import source
from vouch.store import sources
from vouch.store.kb import KB

AGENT = {"VOUCH_AGENT": "some-agent"}
SECRET = "do-not-leak-3f1c"


def snapshot(kb: KB) -> tuple[tuple[str, str, str], dict[str, bytes]]:
    files = {
        p.relative_to(kb.dir).as_posix(): p.read_bytes()
        for p in sorted(kb.dir.rglob("*"))
        if p.is_file()
    }
    return kb_state(kb.root), files


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(f"{SECRET}\n")
    return secret


@pytest.fixture
def attacks(kb: KB, outside: Path) -> list[str]:
    """Paths an agent might send, with the links it would have planted beforehand."""
    root = kb.root
    (root / "innocent.md").symlink_to("/etc/passwd")
    (root / "notes.md").symlink_to(outside)
    (root / "docs").symlink_to(outside.parent, target_is_directory=True)
    (root / "sub").mkdir()
    (root / "sub" / "deep.md").symlink_to("../../elsewhere/secret.txt")
    git(root, "add", "innocent.md", "notes.md", "docs", "sub")
    git(root, "commit", "-qm", "links an agent planted")
    depth = "../" * (len(root.parts) + 2)
    return [
        "innocent.md",
        "notes.md",
        "docs/secret.txt",
        "sub/deep.md",
        str(root / "notes.md"),
        "/etc/passwd",
        "/proc/self/environ",
        str(outside),
        f"{depth}etc/hostname",
        "../../../../etc/hostname",
        "../elsewhere/secret.txt",
        ".git/config",
        ".GIT/config",
        ".Git/HEAD",
        "./.git/config",
        "sub/../.git/config",
        str(root / ".git" / "config"),
        ".git",
        ".git./config",
        ".vouch/config.yaml",
        ".vouch/audit.log.jsonl",
        ".VOUCH/config.yaml",
        str(kb.dir / "config.yaml"),
    ]


def test_agent_paths_outside_the_work_tree_are_refused_with_nothing_written(
    kb: KB, attacks: list[str]
) -> None:
    with JsonlServer(kb.root, env=AGENT) as server:
        server.result("kb.status")  # whatever a server writes at start-up is written now
        before = snapshot(kb)
        for path in attacks:
            response = server.call("kb.register_source_from_path", {"path": path})
            assert not response["ok"], (path, response)
            error = response["error"]
            assert error["code"] == "invalid_request", (path, error)
            assert error["vouch_code"] == OutsideRepository.code, (path, error)
            assert SECRET not in json.dumps(response) and "root:x:0" not in json.dumps(response)
            assert snapshot(kb) == before, path
        assert server.no_more_output()
    assert kb.count(source.KIND) == 0


def test_an_agent_cannot_ask_for_allow_outside(kb: KB, outside: Path) -> None:
    with JsonlServer(kb.root, env=AGENT) as server:
        server.result("kb.status")
        before = snapshot(kb)
        response = server.call(
            "kb.register_source_from_path", {"path": str(outside), "allow_outside": True}
        )
        assert not response["ok"] and "allow_outside" in response["error"]["message"]
        assert snapshot(kb) == before


def test_files_in_the_work_tree_register_by_their_repo_relative_path(kb: KB) -> None:
    (kb.root / "docs").mkdir()
    (kb.root / "docs" / "guide.md").write_text("# Guide\n")
    (kb.root / "latest.md").symlink_to("docs/guide.md")  # a link that stays inside is fine
    with JsonlServer(kb.root, env=AGENT) as server:
        first = server.result("kb.register_source_from_path", {"path": "docs/guide.md"})
        by_link = server.result(
            "kb.register_source_from_path", {"path": str(kb.root / "latest.md")}
        )
    assert by_link == {**first, "deduplicated": True, "title": "latest.md"}
    meta = kb.read(source.KIND, first["id"])
    assert meta is not None and meta["locator"] == "docs/guide.md"


def test_cli_refuses_a_link_out_of_the_repository_and_says_what_to_do(
    kb: KB, run_cli, outside: Path
) -> None:
    (kb.root / "notes.md").symlink_to(outside)
    (kb.root / "passwd").symlink_to("/etc/passwd")
    before = snapshot(kb)
    for target in ("notes.md", "passwd", str(outside), "/proc/self/environ"):
        res = run_cli("source", "add", target, cwd=kb.root)
        assert res.code == 1 and "E108" in res.err and "--allow-outside" in res.err, res.err
        assert "Traceback" not in res.err
    assert snapshot(kb) == before


def test_allow_outside_is_a_persons_opt_in_recorded_by_absolute_path(
    kb: KB, run_cli, outside: Path
) -> None:
    (kb.root / "notes.md").symlink_to(outside)
    res = run_cli("source", "add", "--allow-outside", "notes.md", "--json", cwd=kb.root)
    assert res.code == 0, res.err
    meta = kb.read(source.KIND, res.json()["id"])
    assert meta is not None and meta["locator"] == str(outside.resolve())
    assert kb.source_content(meta["id"]) == f"{SECRET}\n".encode()
    # inside the work tree, git's and vouch's own files stay refused even then
    before = snapshot(kb)
    for target in (".git/config", ".GIT/config", ".vouch/config.yaml"):
        res = run_cli("source", "add", "--allow-outside", target, cwd=kb.root)
        assert res.code == 1 and "E108" in res.err, res.err
    assert snapshot(kb) == before


def test_recursive_add_skips_symbolic_links_and_stays_inside(
    kb: KB, run_cli, outside: Path
) -> None:
    folder = kb.root / "docs"
    folder.mkdir()
    (folder / "real.md").write_text("real\n")
    (folder / "secret.md").symlink_to(outside)
    (folder / "etc").symlink_to(outside.parent, target_is_directory=True)
    (folder / "self.md").symlink_to("real.md")  # skipped too: a walk follows no link
    res = run_cli("source", "add", "docs", "--recursive", "--json", cwd=kb.root)
    assert res.code == 0, res.err
    assert [r["deduplicated"] for r in res.json()["items"]] == [False]
    assert "skipped 3: symbolic link, never followed 3" in res.err
    assert {s["path"] for s in res.json()["skipped"]} == {"secret.md", "etc", "self.md"}
    [meta] = kb.list(source.KIND)
    assert meta["locator"] == "docs/real.md"
    assert all(
        SECRET not in p.read_text(errors="replace")
        for p in (kb.dir / "sources").rglob("*")
        if p.is_file()
    )


def test_recursive_add_of_a_folder_outside_needs_allow_outside(
    kb: KB, run_cli, outside: Path
) -> None:
    (kb.root / "elsewhere").symlink_to(outside.parent, target_is_directory=True)
    before = snapshot(kb)
    for target in (str(outside.parent), "elsewhere", ".git", ".vouch"):
        res = run_cli("source", "add", target, "--recursive", cwd=kb.root)
        assert res.code == 1 and "E108" in res.err, (target, res.err)
    assert snapshot(kb) == before
    res = run_cli(
        "source",
        "add",
        str(outside.parent),
        "--recursive",
        "--allow-outside",
        "--json",
        cwd=kb.root,
    )
    assert res.code == 0, res.err
    meta = kb.read(source.KIND, res.json()["items"][0]["id"])
    assert meta is not None and meta["locator"] == str(outside.resolve())


def _set_max_bytes(kb: KB, limit: int) -> None:
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text() + f"\nsources:\n  max_bytes: {limit}\n")
    git(kb.root, "commit", "-qam", "limit sources")


def test_a_source_over_max_bytes_is_refused_before_it_is_read(kb: KB, run_cli) -> None:
    _set_max_bytes(kb, 10)
    (kb.root / "ten.txt").write_bytes(b"0123456789")
    (kb.root / "eleven.txt").write_bytes(b"0123456789A")
    before = snapshot(kb)
    res = run_cli("source", "add", "eleven.txt", cwd=kb.root)
    assert res.code == 1 and "E110" in res.err and "sources.max_bytes" in res.err, res.err
    res = run_cli("source", "add", "-", cwd=kb.root, input="0123456789A")
    assert res.code == 1 and "E110" in res.err, res.err
    # a file whose size says 0 (as /proc files do) is still read no further than the limit
    res = run_cli("source", "add", "--allow-outside", "/proc/self/environ", cwd=kb.root)
    assert res.code == 1 and "E110" in res.err, res.err
    assert snapshot(kb) == before
    assert run_cli("source", "add", "ten.txt", cwd=kb.root).code == 0


def test_the_default_limit_is_50_mib_and_a_huge_file_is_never_read(kb: KB, run_cli) -> None:
    huge = kb.root / "huge.bin"
    with open(huge, "wb") as fh:  # sparse: 1 GiB on paper, nothing on disk
        fh.truncate(1 << 30)
    before = snapshot(kb)
    res = run_cli("source", "add", "huge.bin", cwd=kb.root)
    assert res.code == 1 and "E110" in res.err and str(50 * 1024 * 1024) in res.err, res.err
    assert snapshot(kb) == before
    assert sources.max_bytes(kb) == 50 * 1024 * 1024


def test_a_link_swapped_in_after_the_check_is_not_followed(
    kb: KB, outside: Path, monkeypatch
) -> None:
    """The race: the path is checked, then a directory on it becomes a link out."""
    (kb.root / "docs").mkdir()
    (kb.root / "docs" / "secret.txt").write_text("harmless\n")
    real_confine = sources.confine

    def confine_then_swap(kb_: KB, path: Path, **kw: bool) -> tuple[Path, str | None]:
        checked = real_confine(kb_, path, **kw)
        os.rename(kb.root / "docs", kb.root / "docs.old")
        (kb.root / "docs").symlink_to(outside.parent, target_is_directory=True)
        return checked

    monkeypatch.setattr(sources, "confine", confine_then_swap)
    with pytest.raises(OutsideRepository):
        sources.register_source_from_path(kb, "some-agent", str(kb.root / "docs/secret.txt"))
    assert kb.count(source.KIND) == 0
