"""A knowledge file whose stat data moved but whose bytes did not — touched, rewritten
with the same bytes, or in a clone copied with `cp -a` — is not an uncommitted edit.

Found on the README walk (issue 36): a copy of a clone showed every approved claim as
"[unreviewed edit] … (uncommitted edit: not reviewed)" until `git status` happened to
refresh git's index, because `git diff-files` lists every file whose stat data differs
from what the index recorded. Only bytes that differ from git's index make a file dirty;
a real edit still does.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from conftest import git
from gate_support import BOB, a_source, call, proposed

from vouch.kinds import claim
from vouch.store.kb import KB

TEXT = "Deploys need a green CI run"


def _approved(kb: KB) -> Path:
    made = proposed(kb, "kb.propose_claim", {"text": TEXT, "evidence": [a_source(kb)]})
    call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    return kb.dir / claim.path_for(claim.KIND.make_id({"text": TEXT}))


def _hits(run_cli, root: Path) -> list[dict[str, Any]]:
    res = run_cli("search", "deploys green CI", "--kind", "claim", "--json", cwd=root)
    assert res.code == 0, res.err
    return [r for r in res.json()["results"] if r["kind"] == "claim"]


def test_a_touched_file_is_not_an_uncommitted_edit(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    path = _approved(kb)
    assert not any(r.get("uncommitted") for r in _hits(run_cli, kb.root))
    data = path.read_bytes()
    path.unlink()  # the same bytes in a new inode, a minute later: stat data all moved
    path.write_bytes(data)
    later = path.stat().st_mtime + 60
    os.utime(path, (later, later))
    assert git(kb.root, "diff-files", "--name-only").strip()  # git's stat check lists it
    [hit] = _hits(run_cli, kb.root)
    assert not hit.get("uncommitted"), hit
    assert "[unreviewed edit]" not in run_cli("search", "deploys green CI", cwd=kb.root).out
    pack = run_cli("context", "do deploys need a green CI run", "--json", cwd=kb.root).json()
    assert [i for i in pack["items"] if i["kind"] == "claim"], pack
    # a real edit is still one
    path.write_text(path.read_text().replace(TEXT, "Deploys never need CI"))
    [hit] = _hits(run_cli, kb.root)
    assert hit.get("uncommitted") is True, hit
    assert "[unreviewed edit]" in run_cli("search", "deploys CI", cwd=kb.root).out


def test_a_clone_copied_with_cp_shows_nothing_as_edited(
    kb_with_sources: KB, tmp_path: Path, run_cli
) -> None:
    kb = kb_with_sources
    _approved(kb)
    copy = tmp_path / "copy"
    shutil.copytree(kb.root, copy, symlinks=True)
    shutil.rmtree(copy / ".vouch" / "index", ignore_errors=True)  # it names its own KB
    assert git(copy, "diff-files", "--name-only").strip()
    hits = _hits(run_cli, copy)
    assert hits and not any(r.get("uncommitted") for r in hits), hits
    assert git(copy, "status", "--porcelain") == ""


def test_a_staged_edit_touched_afterwards_stays_an_edit(kb_with_sources: KB, run_cli) -> None:
    """Its bytes equal git's index, not HEAD: still not reviewed knowledge."""
    kb = kb_with_sources
    path = _approved(kb)
    path.write_text(path.read_text().replace(TEXT, "Deploys never need CI"))
    git(kb.root, "add", str(path))
    later = path.stat().st_mtime + 60
    os.utime(path, (later, later))
    assert git(kb.root, "diff-files", "--name-only").strip()  # stat-dirty against the index
    [hit] = _hits(run_cli, kb.root)
    assert hit.get("uncommitted") is True, hit
