"""Sources worth searching (issue 18, point 5): `source add -r` leaves out what git
ignores and binary files, takes --include / --exclude globs, and ends with a summary of
what it added, what was already present and what it skipped, with reasons."""

from __future__ import annotations

from pathlib import Path

from conftest import git

from vouch.kinds import source
from vouch.store.kb import KB

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(40)


def _docs(root: Path) -> Path:
    docs = root / "docs"
    (docs / "_build").mkdir(parents=True)
    (docs / "_themes" / "alabaster").mkdir(parents=True)
    (docs / "guide.rst").write_text("Guide\n=====\n\nTimeouts are thirty seconds.\n")
    (docs / "api.md").write_text("# API\n\nCall it.\n")
    (docs / "logo.png").write_bytes(PNG)
    (docs / "paper.pdf").write_bytes(b"%PDF-1.4\n\x00binary-looking but a pdf\n")
    (docs / "_build" / "guide.html").write_text("<p>built</p>\n")
    (docs / "_themes" / "alabaster" / "LICENSE").write_text("Permission is granted\n")
    (docs / "_themes" / "alabaster" / "theme.css").write_text("body { margin: 0 }\n")
    (docs / "conf.py").write_text("project = 'x'\n")
    (root / ".gitignore").write_text("docs/_build/\n")
    (docs / ".gitignore").write_text("*.log\n!keep.log\n")
    (docs / "debug.log").write_text("noise\n")
    (docs / "keep.log").write_text("kept on purpose\n")
    return docs


def _locators(kb: KB) -> set[str]:
    return {m["locator"] for m in kb.list(source.KIND, limit=None)}


def test_ignored_and_binary_files_are_skipped_with_reasons(kb: KB, run_cli) -> None:
    _docs(kb.root)
    res = run_cli(
        "source", "add", "docs", "-r", "--exclude", "_themes", "--exclude", "conf.py",
        cwd=kb.root,
    )  # fmt: skip
    assert res.code == 0, res.err
    assert _locators(kb) == {"docs/guide.rst", "docs/api.md", "docs/paper.pdf", "docs/keep.log"}
    summary = res.err.strip().splitlines()[-1]
    assert summary.startswith("added 4, already present 0, skipped 7: "), summary
    assert "hidden (name starts with a dot; add it by name) 1 (.gitignore)" in summary
    assert "binary 1 (logo.png)" in summary
    assert "ignored by .gitignore 1 (_build/guide.html)" in summary
    assert "ignored by docs/.gitignore 1 (debug.log)" in summary
    assert "excluded by --exclude '_themes' 2" in summary
    assert "excluded by --exclude 'conf.py' 1 (conf.py)" in summary
    # a second run: everything already present, the same files skipped, no commit
    head = git(kb.root, "rev-parse", "HEAD")
    again = run_cli(
        "source", "add", "docs", "-r", "--exclude", "_themes,conf.py", "--json", cwd=kb.root
    )
    assert again.code == 0, again.err
    report = again.json()
    assert (report["added"], report["deduplicated"], len(report["skipped"])) == (0, 4, 7)
    assert {"path": "logo.png", "reason": "binary"} in report["skipped"]
    assert all(r["deduplicated"] for r in report["items"])
    assert sorted(r["path"] for r in report["items"]) == [
        "api.md",
        "guide.rst",
        "keep.log",
        "paper.pdf",
    ]
    assert "added 0, already present 4, skipped 7" in again.err
    assert git(kb.root, "rev-parse", "HEAD") == head


def test_include_globs_and_all(kb: KB, run_cli) -> None:
    _docs(kb.root)
    res = run_cli("source", "add", "docs", "-r", "--include", "*.rst", "--include", "api.*",
                  cwd=kb.root)  # fmt: skip
    assert res.code == 0, res.err
    assert _locators(kb) == {"docs/guide.rst", "docs/api.md"}
    assert "not matched by --include" in res.err
    everything = run_cli("source", "add", "docs", "-r", "--all", "--exclude", "*.css",
                         cwd=kb.root)  # fmt: skip
    assert everything.code == 0, everything.err
    assert {"docs/logo.png", "docs/_build/guide.html", "docs/debug.log"} <= _locators(kb)
    assert "docs/_themes/alabaster/theme.css" not in _locators(kb)
    refused = run_cli("source", "add", "docs/api.md", "--exclude", "*.md", cwd=kb.root)
    assert refused.code == 1 and "-r" in refused.err


def test_a_folder_outside_the_repository_is_not_asked_of_git(
    kb: KB, run_cli, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.txt").write_text("outside notes\n")
    (outside / "blob.bin").write_bytes(b"\x00\x01\x02")
    res = run_cli("source", "add", str(outside), "-r", "--allow-outside", cwd=kb.root)
    assert res.code == 0, res.err
    assert "added 1, already present 0, skipped 1: binary 1 (blob.bin)" in res.err
