#!/usr/bin/env python3
"""An agent's session over `vouch serve --transport jsonl`: one JSON request a line on
the server's stdin, one response a line on its stdout.

The person who starts the server names the agent (VOUCH_AGENT); the agent asks what it
may do, searches, and proposes a claim citing the lines its search found. It may not
approve: a person does, at the CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from _helpers import REVIEWER, Scratch, check, run, say


class Session:
    """A running `vouch serve --transport jsonl`: call(method, params) → response."""

    def __init__(self, s: Scratch, kb: Path, agent: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vouch", "serve", "--transport", "jsonl"],
            cwd=kb,
            env={**s.env, "VOUCH_AGENT": agent},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # the server logs there
            text=True,
        )
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.next_id += 1
        request = {"id": self.next_id, "method": method, "params": params or {}}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        check(line, f"the server closed its stdout after {method}")
        response = json.loads(line)
        check(response["id"] == self.next_id, f"answer to another request: {response}")
        return response

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()  # EOF ends the server
        check(self.proc.wait(timeout=30) == 0, f"server exit status {self.proc.returncode}")


def main(s: Scratch) -> None:
    kb = s.knowledge_base("billing", "deploy-runbook.md")
    s.vouch("source", "add", "docs/deploy-runbook.md", cwd=kb)
    say("vouch init; vouch source add docs/deploy-runbook.md")

    server = Session(s, kb, agent="triage-bot")
    say("VOUCH_AGENT=triage-bot vouch serve --transport jsonl")

    caps = server.call("kb.capabilities")["result"]
    names = {m["name"] for m in caps["methods"]}
    check({"kb.search", "kb.propose_claim"} <= names, f"methods: {sorted(names)}")
    check(caps["caller"]["may_write"] and not caps["caller"]["may_decide"], f"{caps['caller']}")
    say(f"→ kb.capabilities: {len(names)} methods; may_write, not may_decide")

    hits = server.call("kb.search", {"query": "how do I roll back a release", "limit": 3})
    top = hits["result"][0]
    check(top["source"]["section"] == "Rolling back", f"top hit: {top['source']}")
    cite = f"{top['cite'][:12]}…{top['cite'][64:]}"
    say(f"→ kb.search 'how do I roll back a release': §{top['source']['section']}, {cite}")

    proposed = server.call(
        "kb.propose_claim",
        {
            "text": "Rollbacks of the billing service do not need a review.",
            "evidence": [top["cite"]],  # the lines the search found
            "type": "fact",
            "rationale": "the runbook's rollback section",
        },
    )
    check(proposed["ok"], f"propose: {proposed}")
    pid = proposed["result"]["proposal_id"]
    say(f"→ kb.propose_claim: proposal {pid}")

    refused = server.call("kb.approve", {"proposal_id": pid})
    check(not refused["ok"] and refused["error"]["vouch_code"] == "E104", f"{refused}")
    say("→ kb.approve: refused [E104], a person decides")
    server.close()

    pending = s.vouch_json("pending", cwd=kb)
    check([p["proposer"] for p in pending] == ["triage-bot"], f"pending: {pending}")
    s.review(pid, cwd=kb)
    s.as_reviewer("approve", pid, cwd=kb)
    say(f"vouch pending → the agent's proposal; vouch approve {pid}, as {REVIEWER}")


if __name__ == "__main__":
    run(main)
