"""How session results look to people (`vouch session start|end`, `vouch crystallize`).

`session start` prints the session id alone, so `SID=$(vouch session start --task ...)`
works; the rest is one line per fact.
"""

from __future__ import annotations

from typing import Any


def started(result: dict[str, Any]) -> str:
    return str(result["session_id"])


def ended(result: dict[str, Any]) -> str:
    n = result["proposals"]
    return f"ended session {result['session_id']}: {n} proposal{'' if n == 1 else 's'}"


def crystallized(result: dict[str, Any]) -> str:
    lines = []
    if result.get("page_id") is None:
        lines.append(f"session {result['session_id']}: no page proposed")
    elif result.get("duplicate") == "durable":
        lines.append(f"page {result['page_id']} is already approved; nothing proposed")
    else:
        pending = " (already pending)" if result.get("duplicate") == "pending" else ""
        lines.append(f"proposed page {result['page_id']} as {result['proposal_id']}{pending}")
    states: dict[str, int] = {}
    for item in result.get("proposals") or []:
        states[item["state"]] = states.get(item["state"], 0) + 1
    if states:
        lines.append("proposals: " + ", ".join(f"{n} {s}" for s, n in sorted(states.items())))
    lines.append(f"claims flagged for review: {result['claims_promoted']}")
    lines += [f"  {claim_id}" for claim_id in result.get("promotable") or []]
    return "\n".join(lines)
