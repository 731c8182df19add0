"""One very long line in a log a branch can commit neither hangs nor floods memory.

The third outsider committed a `.vouch/searches.log.jsonl` with one 80 MB line (`vouch
stats` grew past 1.4 GB, then E200) and appended a 24 MB line to the audit log (`vouch
status`, CLI and JSONL, read its last line in quadratic time: past 60 s). Both are read
within bounds now; a committed search log is local state, reported like the index.
"""

from __future__ import annotations

import json
from typing import Any

from conftest import git
from gate_support import bounded_vouch

from vouch.store.kb import KB


def test_a_committed_search_log_with_a_huge_line(kb: KB, run_cli: Any) -> None:
    log = kb.dir / "searches.log.jsonl"
    with log.open("w") as fh:
        for query in ("a", "x" * (80 << 20), "b"):
            fh.write(json.dumps({"query": query, "mode": "hybrid", "result_count": 1}) + "\n")
    git(kb.root, "add", "-f", ".vouch/searches.log.jsonl")
    git(kb.root, "commit", "-qm", "share our searches")
    res = bounded_vouch(kb.root, "stats", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["searches"] == 2
    doctor = run_cli("doctor", "--json", cwd=kb.root)
    assert doctor.code == 1 and "tracked-local-state" in doctor.out, doctor.out


def test_a_huge_last_audit_line_does_not_hang_status(kb: KB) -> None:
    with (kb.dir / "audit.log.jsonl").open("a") as fh:
        fh.write('{"id":"x","event":"kb.init","actor":"' + "A" * (24 << 20) + '"}\n')
    git(kb.root, "commit", "-qam", "a big audit line")
    res = bounded_vouch(kb.root, "status", "--json")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    served = bounded_vouch(kb.root, "serve", stdin='{"id":1,"method":"kb.status","params":{}}\n')
    assert '"id": 1' in served.stdout or '"id":1' in served.stdout, served.stdout[:500]
