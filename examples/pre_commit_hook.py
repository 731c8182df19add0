#!/usr/bin/env python3
"""The pre-commit framework (https://pre-commit.com) running `vouch lint --staged` on
every commit of a repository that holds a knowledge base.

In your repository, .pre-commit-config.yaml names vouch's hook by its URL:

    - repo: https://github.com/<owner>/vouch
      rev: <a tag or commit>
      hooks:
        - id: vouch-lint

Here the same hook (.pre-commit-hooks.yaml beside this folder) runs as a local hook with
this interpreter's vouch, so nothing is downloaded. A commit that stages no knowledge
passes at once; a claim edited by hand is stopped; a config change is checked and passes.
Needs the framework: pip install pre-commit (one of vouch's test dependencies).
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

import yaml

from _helpers import Scratch, check, run, say

HOOKS = Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml"


def local_hook_config() -> str:
    """.pre-commit-config.yaml: vouch's published vouch-lint hook as a local one."""
    hook = next(h for h in yaml.safe_load(HOOKS.read_text()) if h["id"] == "vouch-lint")
    entry = hook["entry"].replace("vouch", f"{shlex.quote(sys.executable)} -m vouch", 1)
    local = {**hook, "entry": entry, "language": "system"}
    del local["description"]
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}, sort_keys=False)


def main(s: Scratch) -> None:
    check(importlib.util.find_spec("pre_commit"), "needs the framework: pip install pre-commit")
    s.env["PRE_COMMIT_HOME"] = str(s.root / "pre-commit-cache")  # not ~/.cache/pre-commit
    kb = s.knowledge_base("billing", "deploy-runbook.md")
    src = s.vouch_json("source", "add", "docs/deploy-runbook.md", cwd=kb)["id"]
    made = s.vouch_json(
        "propose-claim", "--text", "Rollbacks do not need a review.", "--evidence", src, cwd=kb
    )
    s.review(made["proposal_id"], cwd=kb)
    s.as_reviewer("approve", made["proposal_id"], cwd=kb)
    say("vouch init; a source and an approved claim")

    (kb / ".pre-commit-config.yaml").write_text(local_hook_config())
    s.git("add", ".pre-commit-config.yaml", "docs", cwd=kb)
    s.run([sys.executable, "-m", "pre_commit", "install"], cwd=kb)
    passed = s.run(["git", "commit", "-m", "pre-commit runs vouch lint"], cwd=kb).stderr
    check("vouch lint (staged knowledge files)" in passed and "Skipped" in passed, passed)
    say("pre-commit install; a commit that stages no knowledge file skips the hook")

    claim = next((kb / ".vouch" / "claims").glob(f"*/{made['claim_id']}.yaml"))
    claim.write_text(claim.read_text().replace("do not need", "never need"))
    s.git("add", str(claim), cwd=kb)
    refused = s.run(["git", "commit", "-m", "tweak a claim"], cwd=kb, expect=1)
    out = refused.stderr  # git gives a hook's output to stderr
    check("vouch lint (staged knowledge files)" in out and "Failed" in out, out)
    check("error[content-address]" in out, out)
    say("a claim edited by hand → git commit refused: error[content-address] (use supersede)")
    s.git("reset", "-q", "--hard", cwd=kb)

    config = kb / ".vouch" / "config.yaml"
    config.write_text(config.read_text().replace("stale_days: 180", "stale_days: 90"))
    passed = s.run(["git", "commit", "-am", "confirm claims every 90 days"], cwd=kb).stderr
    check("vouch lint (staged knowledge files)" in passed and "Passed" in passed, passed)
    say("a change to .vouch/config.yaml → the hook runs vouch lint, it passes, the commit lands")


if __name__ == "__main__":
    run(main)
