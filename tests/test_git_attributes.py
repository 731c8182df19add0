"""No `.gitattributes` rewrites the knowledge files on checkout (the third outsider).

A pull request adding `.vouch/** text eol=crlf` to the root `.gitattributes` — a plain
commit outside `.vouch/` — passed `lint --since`; afterwards every clone checked the
knowledge out with CRLF line endings, and `doctor` and `source verify` failed for good.
`vouch init` now turns conversion off in `.vouch/.gitattributes` (the deeper file wins),
and `doctor` and `lint --since` report a knowledge file that git would still convert.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import git
from gate_support import propose_claim

from vouch.store.kb import KB


def _clone(src: Path, at: Path) -> Path:
    git(src.parent, "clone", "-q", str(src), str(at))
    return at


def test_a_root_gitattributes_cannot_rewrite_knowledge(
    kb_with_sources: KB, run_cli: Any, tmp_path: Path
) -> None:
    kb = kb_with_sources
    from gate_support import call

    call(kb, "kb.approve", {"proposal_id": propose_claim(kb)}, actor="bob")
    base = git(kb.root, "rev-parse", "HEAD").strip()
    (kb.root / ".gitattributes").write_text(".vouch/** text eol=crlf\n")
    git(kb.root, "add", ".gitattributes")
    git(kb.root, "commit", "-qm", "normalize line endings")
    clone = _clone(kb.root, tmp_path / "clone")
    claim = next((clone / ".vouch" / "claims").rglob("*.yaml"))
    assert b"\r\n" not in claim.read_bytes()  # .vouch/.gitattributes wins
    assert run_cli("doctor", "--json", cwd=clone).code == 0
    assert run_cli("lint", "--since", base, "--json", cwd=clone).code == 0


def test_a_branch_that_turns_conversion_on_fails_lint_since_and_doctor(
    kb_with_sources: KB, run_cli: Any
) -> None:
    kb = kb_with_sources
    base = git(kb.root, "rev-parse", "HEAD").strip()
    (kb.dir / ".gitattributes").write_text("* text eol=crlf\n")
    git(kb.root, "add", ".vouch/.gitattributes")
    git(kb.root, "commit", "-qm", "normalize line endings")
    for args in (("lint", "--since", base, "--json"), ("doctor", "--json")):
        res = run_cli(*args, cwd=kb.root)
        assert res.code == 1 and "git-attributes" in res.out and "eol=crlf" in res.out, (
            args,
            res.out,
        )
