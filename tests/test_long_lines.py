"""One very long line in a log a branch can commit neither hangs nor floods memory.

The third outsider committed a `.vouch/searches.log.jsonl` with one 80 MB line (`vouch
stats` grew past 1.4 GB, then E200) and appended a 24 MB line to the audit log (`vouch
status`, CLI and JSONL, read its last line in quadratic time: past 60 s). Both are read
within bounds now; a committed search log is local state, reported like the index.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import git

from vouch.store.kb import KB


def _bounded() -> None:
    limit = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _vouch(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vouch", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "VOUCH_NO_WARM": "1"},
        preexec_fn=_bounded,
    )


def test_a_committed_search_log_with_a_huge_line(kb: KB, run_cli: Any) -> None:
    log = kb.dir / "searches.log.jsonl"
    with log.open("w") as fh:
        for query in ("a", "x" * (80 << 20), "b"):
            fh.write(json.dumps({"query": query, "mode": "hybrid", "result_count": 1}) + "\n")
    git(kb.root, "add", "-f", ".vouch/searches.log.jsonl")
    git(kb.root, "commit", "-qm", "share our searches")
    res = _vouch(kb.root, "stats", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["searches"] == 2
    doctor = run_cli("doctor", "--json", cwd=kb.root)
    assert doctor.code == 1 and "tracked-local-state" in doctor.out, doctor.out


def test_a_huge_last_audit_line_does_not_hang_status(kb: KB) -> None:
    with (kb.dir / "audit.log.jsonl").open("a") as fh:
        fh.write('{"id":"x","event":"kb.init","actor":"' + "A" * (24 << 20) + '"}\n')
    git(kb.root, "commit", "-qam", "a big audit line")
    res = _vouch(kb.root, "status", "--json")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    served = _vouch(kb.root, "serve", stdin='{"id":1,"method":"kb.status","params":{}}\n')
    assert '"id": 1' in served.stdout or '"id":1' in served.stdout, served.stdout[:500]
