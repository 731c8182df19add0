"""Review on a git host as the README and the pull-request template write it: their shell
lines, run as written by bash in real clones of a bare "host" repository (issue 36, the
first hour: the documented `git fetch origin && vouch approve ID` was refused E104)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git
from gate_support import propose_claim

from vouch.kinds import claim
from vouch.store.kb import KB

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def host_section() -> str:
    """The README's "On a git host" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("### On a git host")
    return text[start : text.index("\n### ", start + 1)]


def block_with(text: str, needle: str) -> str:
    """The shell block of `text` that holds `needle`."""
    found = [body for lang, body in FENCE.findall(text) if lang == "sh" and needle in body]
    assert len(found) == 1, needle
    return found[0]


def span_with(text: str, needle: str) -> str:
    """The code span of `text`'s prose that holds `needle`, whitespace folded."""
    prose = FENCE.sub("", text)
    found = [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", prose) if needle in s]
    assert found, needle
    return found[0]


@pytest.fixture
def shim(tmp_path: Path) -> dict[str, str]:
    """An environment whose `vouch` is this checkout's, run by this interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "vouch"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vouch "$@"\n')
    exe.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).strip(os.pathsep)
    return env


def bash(cwd: Path, lines: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", lines],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def hosted(kb: KB, tmp_path: Path, text: str) -> tuple[str, Path]:
    """An agent's proposal pushed to a bare host, unseen by anyone; a reviewer's clone."""
    remote = tmp_path / "host.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(kb.root, "remote", "add", "origin", str(remote))
    git(kb.root, "push", "-q", "origin", "main")
    pid = propose_claim(kb, text, shown=False)
    git(kb.root, "push", "-q", "origin", f"vouch/proposal/{pid}")
    reviewer = tmp_path / "reviewer"
    git(tmp_path, "clone", "-q", str(remote), str(reviewer))
    return pid, reviewer


def landed(kb: KB, tmp_path: Path, pid: str, text: str) -> None:
    """The approval is on the host, the host's branch gone; the author pulls it."""
    remote = tmp_path / "host.git"
    assert git(remote, "branch", "--list", f"vouch/proposal/{pid}") == ""
    assert f"Vouch-Proposal: {pid}" in git(remote, "log", "-1", "--format=%B", "main")
    git(kb.root, "pull", "-q", "--no-rebase", "origin", "main")
    cid = claim.KIND.make_id({"text": text})
    assert kb.read(claim.KIND, cid)["approved_by"] == "Test Person"


def test_the_readme_host_steps_approve_as_written(
    kb_with_sources: KB, tmp_path: Path, shim: dict[str, str]
) -> None:
    kb, text = kb_with_sources, "Reviewed on the host as the README says"
    pid, reviewer = hosted(kb, tmp_path, text)
    section = host_section()
    steps = block_with(section, "vouch approve").replace("PROPOSAL_ID", pid)
    done = bash(reviewer, steps, shim)
    assert done.returncode == 0, done.stdout + done.stderr
    landed(kb, tmp_path, pid, text)
    # the author's copy of the branch, as the README says to drop it
    cleanup = span_with(section, "git fetch --prune").replace("PROPOSAL_ID", pid)
    assert git(kb.root, "branch", "--list", f"vouch/proposal/{pid}").strip()
    done = bash(kb.root, cleanup, shim)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(kb.root, "branch", "--list", f"vouch/proposal/{pid}") == ""
    assert git(kb.root, "branch", "-r", "--list", f"origin/vouch/proposal/{pid}") == ""


def test_the_pull_request_template_steps_approve_as_written(
    kb_with_sources: KB, tmp_path: Path, shim: dict[str, str]
) -> None:
    kb, text = kb_with_sources, "Reviewed on the host as the template says"
    pid, reviewer = hosted(kb, tmp_path, text)
    template = (ROOT / "templates" / "pull_request_template.md").read_text(encoding="utf-8")
    steps = block_with(template, "vouch approve").replace("<id>", pid).replace('"…"', '"ok"')
    done = bash(reviewer, steps, shim)
    assert done.returncode == 0, done.stdout + done.stderr
    landed(kb, tmp_path, pid, text)
    cleanup = span_with(template, "git fetch --prune").replace("<id>", pid)
    done = bash(kb.root, cleanup, shim)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(kb.root, "branch", "--list", f"vouch/proposal/{pid}") == ""
