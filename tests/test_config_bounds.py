"""Numbers in a committed configuration past any sensible range are a clear error or a
bound, never an E200 OverflowError (the third outsider: `stale_days:
99999999999999999999` made lint, doctor and kb.lint exit 2; `sources.max_bytes` the same
made `source add` crash)."""

from __future__ import annotations

from typing import Any

from conftest import git

from vouch.store.kb import KB

HUGE = "99999999999999999999"


def _commit(kb: KB, old: str, new: str) -> None:
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace(old, new))
    git(kb.root, "commit", "-qam", "settings")


def test_a_huge_stale_days_means_never(kb_with_sources: KB, run_cli: Any) -> None:
    _commit(kb_with_sources, "stale_days: 180", f"stale_days: {HUGE}")
    for args in (("lint", "--json"), ("doctor", "--json")):
        res = run_cli(*args, cwd=kb_with_sources.root)
        assert res.code in (0, 1) and "E200" not in res.err and "Traceback" not in res.err, (
            args,
            res.err,
        )


def test_a_huge_max_bytes_is_a_clear_error(kb: KB, run_cli: Any) -> None:
    _commit(kb, "max_bytes: 52428800", f"max_bytes: {HUGE}")
    (kb.root / "notes.md").write_text("notes\n")
    res = run_cli("source", "add", "notes.md", cwd=kb.root)
    assert res.code == 1 and "E100" in res.err and "sources.max_bytes" in res.err, res.err


def test_paths_nobody_can_write_are_user_errors(kb_with_sources: KB, run_cli: Any) -> None:
    """The third outsider: `export --out /proc/x.tgz`, `--out notes.md/x.tgz` and
    `init --path /proc/x` were E200 internal errors (exit 2), and `--out` made folders."""
    root = kb_with_sources.root
    (root / "notes.md").write_text("notes\n")
    for out in ("/proc/x.tgz", "notes.md/x.tgz", "new/dirs/x.tgz"):
        res = run_cli("export", "--out", out, cwd=root)
        assert res.code == 1 and "E100" in res.err, (out, res.err)
    assert not (root / "new").exists()
    res = run_cli("init", "--path", "/proc/x", cwd=root)
    assert res.code == 1 and "E100" in res.err, res.err


def test_a_writers_temp_file_is_not_taken_by_git_add(kb: KB) -> None:
    """A kill mid-write leaves `.<name>.<random>.tmp` beside the file; `git add -A` then
    committed it (the third outsider)."""
    (kb.dir / "claims").mkdir(exist_ok=True)
    (kb.dir / "claims" / ".x.yaml.abc123.tmp").write_text("half")
    assert git(kb.root, "status", "--porcelain", "--untracked-files=all", "--", ".vouch") == ""


def test_a_golden_file_that_is_no_file_is_refused(kb: KB, run_cli: Any) -> None:
    """The fourth outsider: a committed golden file linked to /dev/zero took `vouch eval`
    past 1.5 GB, then E200."""
    (kb.root / "golden.jsonl").symlink_to("/dev/zero")
    res = run_cli("eval", "golden.jsonl", cwd=kb.root)
    assert res.code == 1 and "E100" in res.err and "regular file" in res.err, res.err
