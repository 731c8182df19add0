"""What a reviewer sees of a change proposal (`vouch show`, the review screen): the
request, the object as approved now, the edit approve would write on the checked-out
commit as a diff, and what rests on the object (`vouch impact`) — and what approve would
refuse."""

from __future__ import annotations

import contextlib
import difflib
from typing import Any

from vouch.core import ids
from vouch.errors import GateRefused, VouchError
from vouch.gate import change_plans, changes, records, verify
from vouch.gate.records import Proposal
from vouch.kinds import source as source_kind
from vouch.store.kb import KB

_DIFF_LINES = 400  # of the planned edit, shown


def check(kb: KB, proposal: Proposal, head: str) -> change_plans.Plan:
    """The plan approve would land on `head`, or GateRefused / ValidationFailed."""
    verify.check_change(kb, proposal, head)
    return change_plans.plan(kb, head, changes.of(proposal))


def shown(kb: KB, proposal_id: str, data: dict[str, Any]) -> dict[str, Any]:
    """What `pending.show` said (`data`), with `change`, the `object` as approved now,
    the `diff` approve would write, `impact`, and `problems` approve would refuse."""
    out: dict[str, Any] = {}
    proposal = records.find(kb, proposal_id)
    try:
        change = changes.of(proposal)
    except GateRefused as exc:
        return {"problems": [*data.get("problems", []), exc.message]}
    out["change"] = change.to_json()
    head = kb.repo.resolve("HEAD")
    if data.get("state") != "pending" or head is None:
        return out
    try:
        plan = check(kb, proposal, head)
    except VouchError as exc:
        return {**out, "problems": [*data.get("problems", []), exc.message]}
    out["touches"] = plan.touched()
    out["diff"] = _diff(kb, plan)
    target = next(iter(plan.before), None)
    kind = next(
        (k for k in change_plans.KNOWLEDGE if target and target.startswith(k.directory + "/")),
        None,
    )
    if target is not None and kind is not None:
        out["object"] = kind.load(plan.before[target].decode("utf-8"), where=target)
        out["object_kind"] = kind.name
    if ids.is_source_id(change.target):  # a redaction: the source's meta as it is now
        meta = kb.read(source_kind.KIND, change.target)
        if meta is not None:
            out.update(object=meta, object_kind="source")
            out["other_versions"] = _other_versions(kb, meta)
    if plan.cited is not None:  # the reviewer reads the new span, not only its pointer
        out["new_citation"] = _new_citation(kb, head, plan)
    with contextlib.suppress(VouchError):
        from vouch.history.impact import impact

        out["impact"] = impact(kb, change.target)
    return out


def _other_versions(kb: KB, meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The other versions registered at a redacted source's locator that still hold their
    bytes: each may hold the same words, and each is redacted on its own."""
    from vouch.store.versions import versions_at

    locator = str(meta.get("locator") or "")
    if not locator or not source_kind.shown(locator):
        return []
    return [
        {"id": v["id"], "created_at": v.get("created_at")}
        for v in versions_at(kb, locator)
        if v["id"] != meta.get("id") and not source_kind.is_redacted(v)
    ]


def _new_citation(kb: KB, head: str, plan: change_plans.Plan) -> dict[str, Any]:
    from vouch.history.citations import cite
    from vouch.history.snapshot import Snapshot
    from vouch.kinds import evidence as evidence_kind

    made = {}
    for eid in plan.made:
        data = plan.files.get(evidence_kind.path_for(eid))
        if data is not None:
            made[eid] = evidence_kind.load(data.decode("utf-8"), where=eid)
    assert plan.cited is not None
    return cite(Snapshot(kb, head), plan.cited, made=made)


def _diff(kb: KB, plan: change_plans.Plan) -> str:
    lines: list[str] = []
    for rel in sorted(plan.files):
        after = plan.files[rel]
        before = plan.before.get(rel)
        path = kb.rel(rel)
        if after is None and before is not None and _is_content(rel):
            # a source's bytes (perhaps binary, perhaps long): named, not printed
            lines.append(f"deleted: {path} ({len(before)} bytes, the source's content)\n")
            continue
        lines += difflib.unified_diff(
            (before or b"").decode("utf-8", "replace").splitlines(keepends=True),
            (after or b"").decode("utf-8", "replace").splitlines(keepends=True),
            f"a/{path}" if before is not None else "/dev/null",
            f"b/{path}" if after is not None else "/dev/null",
        )
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"... ({len(lines) - _DIFF_LINES} more lines)\n"]
    return "".join(lines)


def _is_content(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) == 4 and parts[0] == "sources" and source_kind.is_content_name(parts[3])
