"""`vouch source refresh`: what drift found, made into decisions for a person (issue 38
item 0).

For every file whose cited lines drifted (`vouch.health.drift`), the file as it is now
is registered as the source's new version, and each affected claim gets one change
proposal (`vouch.gate.changes`) saying what should happen to it:

- the cited lines moved: re-cite them where they are now, in the new version;
- a claim citing the whole file: re-cite the new version;
- the cited lines changed, or the file is gone: archive the claim — the rationale says
  what the lines read now, and how to keep the claim instead (reject, and re-cite or
  supersede it): a claim resting on lines that say something else is not served as
  approved by default.

Nothing is decided here: each proposal waits for `vouch approve` / `vouch reject`.
Running it again opens nothing twice (an open proposal asking the same is named).
"""

from __future__ import annotations

from typing import Any

from vouch.errors import VouchError
from vouch.gate.identity import Identity
from vouch.gate.propose_change import propose_change
from vouch.health.drift import Drift, drifted
from vouch.store import sources
from vouch.store.kb import KB

_SHOWN = 300  # characters of what changed lines read now, in a rationale


def refresh(kb: KB, actor: Identity, paths: list[str] | None = None) -> dict[str, Any]:
    """Register the drifted files' new versions and open a proposal per affected claim."""
    found = drifted(kb, paths=paths or None)
    registered: dict[str, dict[str, Any]] = {}
    for path in sorted({d.path for d in found if d.state != "deleted"}):
        try:
            made = sources.register_source_from_path(kb, actor.name, path)
        except VouchError as exc:
            registered[path] = {"path": path, "error": exc.message}
            continue
        registered[path] = {"path": path, "source_id": made.get("id") or made.get("source_id")}
    proposals = [_propose(kb, actor, d, registered.get(d.path)) for d in found]
    return {
        "drifted": len(found),
        "registered": list(registered.values()),
        "proposals": proposals,
    }


def _propose(kb: KB, actor: Identity, d: Drift, version: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"claim_id": d.claim_id, "path": d.path, "locator": d.locator}
    out["state"] = d.state
    old = d.evidence_id or d.source_id
    new_sid = (version or {}).get("source_id")
    where = f"{d.path}" + (f" {d.locator}" if d.locator else "")
    try:
        if new_sid and d.state == "moved" and d.now:
            result = propose_change(
                kb,
                actor,
                d.claim_id,
                "recite",
                evidence=f"{new_sid}:{d.now}",
                drop=[old],
                rationale=f"the lines it cites ({where}) moved to {d.now}; re-cite them there",
            )
        elif new_sid and not d.locator and d.state == "changed":
            result = propose_change(
                kb,
                actor,
                d.claim_id,
                "recite",
                evidence=new_sid,
                drop=[old],
                rationale=f"{d.path}, which it cites as a whole, changed; approve if the claim "
                "still holds of the new version, else reject and archive or supersede it",
            )
        else:
            what = (
                f"{d.path} is gone"
                if d.state == "deleted"
                else f"the lines it cites ({where}) now read: {(d.now or '')[:_SHOWN]!r}"
            )
            result = propose_change(
                kb,
                actor,
                d.claim_id,
                "archive",
                rationale=f"{what}. Approve to retire the claim; to keep it, reject this and "
                "re-cite it (`vouch propose-change ID --op recite --evidence PATH:Lx-Ly`) or "
                "supersede it with a revised claim",
            )
    except VouchError as exc:
        return {**out, "error": exc.message}
    return {
        **out,
        "op": (result.get("change") or {}).get("op"),
        "proposal_id": result.get("proposal_id"),
        **({"duplicate": result["duplicate"]} if result.get("duplicate") else {}),
    }
