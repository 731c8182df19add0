"""Lifecycle: direct, audited changes to approved knowledge.

Knowledge enters through the review gate; once approved it still moves. A claim is
replaced by a better one (`supersede`), turns out to disagree with another
(`contradict`), goes out of use (`archive`, claims and pages), is checked again
(`confirm`), gains a citation (`cite`), or comes to be relied on (`promote`).

Each change edits the object's file as committed on the checked-out branch, in place
(`Kind.edit`: the user's comments and formatting survive), and lands it with its audit
event (`claim.supersede`, ...) in ONE commit under the write lock (`writer.commit_direct`:
journal first, crash-safe). The index notices the new commit and refreshes itself. Only
objects committed on the checked-out branch — approved knowledge — can be changed (E101
otherwise: a pending proposal is changed by proposing again). A change that would change
nothing says so and writes nothing. A change that breaks the object model (a cycle of
supersession, a retired replacement) is refused with every reason (E102).

How a claim earns trust. Approval makes a claim `working`: approved, but young.
`promote` is the reviewer's step up the ladder working → actionable → stable (one rung
by default, or straight to a named one; never down). It is a decision, like approving:
over an agent transport it needs a server started with `--allow-decisions`, and nobody
promotes a claim they proposed (unless `review.approver_role: trusted-agent`). A
`contested` claim is promoted only once every claim it contradicts is retired
(superseded or archived). `confirm` records that someone checked a claim again
(`last_confirmed_at`), which is what staleness is measured from; it moves no status.

Who may change approved knowledge is a review question too: at the CLI a person may;
an agent over JSONL/MCP only when the configuration committed on the branch says
`review.agent_lifecycle: true` (`agents_may_change`, enforced by `ops.authorize`).
"""

from __future__ import annotations

from typing import Any

from vouch.core import ids
from vouch.errors import GateRefused, ValidationFailed
from vouch.gate.edits import (
    Approved,
    Branch,
    land_edit,
    refuse,
    result,
    retired,
)
from vouch.kinds import claim as claim_kind
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import page as page_kind
from vouch.kinds import source as source_kind
from vouch.store import evidence as evidence_ptr
from vouch.store.kb import KB
from vouch.store.recovery import gate_lock

LADDER = ("working", "actionable", "stable")
PROMOTIONS = ("actionable", "stable")
_MAX_CHAIN = 10_000  # a supersession walk longer than this is a corrupt history


# -- who may ------------------------------------------------------------------------------
def agents_may_change(kb: KB) -> bool:
    """`review.agent_lifecycle` as committed on the checked-out branch: may an agent
    (JSONL, MCP) change approved knowledge? Read like the gate's settings, from the
    commit, never from an uncommitted edit of the work tree. Default: no."""
    from vouch.gate.committed import settings_at

    tip = kb.repo.peek("HEAD")
    return tip is not None and settings_at(kb, tip).get("review.agent_lifecycle") is True


# -- the changes --------------------------------------------------------------------------
def supersede(
    kb: KB, actor: str, old_id: str, new_id: str, reason: str | None = None
) -> dict[str, Any]:
    """`old` is replaced by `new`: old.status = superseded, old.superseded_by = new,
    new.supersedes += old. Supersession is directional and acyclic."""
    with gate_lock(kb):
        branch = Branch(kb)
        old = branch.claim(old_id, "superseded claim")
        new = branch.claim(new_id, "replacement claim")
        if old_id == new_id:
            refuse([f"claim {old_id} cannot supersede itself"], "supersession")
        if (
            old.get("superseded_by") == new_id
            and old.status == "superseded"
            and old_id in new.ids_in("supersedes")
        ):
            return result(
                "claim.supersede",
                [old, new],
                f"claim {old_id} is already superseded by {new_id}",
                None,
            )
        cycle = _replaced_by(branch, new, old)
        problems = []
        if cycle:
            problems.append(
                f"{old_id} already replaced {new_id} ({' → '.join(cycle)}): "
                "superseding it back would make a cycle"
            )
        if old.status == "redacted":
            problems.append(f"claim {old_id} is redacted and stays so")
        elif old.get("superseded_by") not in (None, "", new_id):
            problems.append(
                f"claim {old_id} is already superseded by "
                f"{old.get('superseded_by')}; supersede that one instead"
            )
        if not cycle and retired(new):
            problems.append(
                f"the replacement {new_id} is {retired(new)}: supersede by a live claim"
            )
        refuse(problems, "supersession")
        old.changes.update(status="superseded", superseded_by=new_id)
        new.add_to("supersedes", old_id)
        return land_edit(
            kb,
            "claim.supersede",
            [old, new],
            f"claim {old_id} is superseded by {new_id}",
            actor,
            reason=reason,
            data={"superseded_by": new_id},
        )


def _replaced_by(branch: Branch, new: Approved, old: Approved) -> list[str] | None:
    """The chain new → … → old when `old` already (transitively) replaced `new`, so that
    `new` replacing `old` would close a cycle; else None. Both directions are walked:
    `superseded_by` from `new`, and `supersedes` from `old` (a hand-edited history may
    hold only one side)."""
    chain, node = [new.id], new
    while len(chain) < _MAX_CHAIN:
        nxt = node.get("superseded_by")
        if not nxt or nxt in chain:
            break
        chain.append(nxt)
        if nxt == old.id:
            return chain
        found = branch.load(claim_kind.KIND, nxt) if ids.is_object_id(nxt) else None
        if found is None:
            break
        node = found
    seen = {old.id}
    stack: list[tuple[Approved, list[str]]] = [(old, [old.id])]
    while stack and len(seen) < _MAX_CHAIN:
        node, path = stack.pop()
        for link in node.ids_in("supersedes"):
            if link == new.id:
                return [new.id, *reversed(path)]
            if link in seen or not ids.is_object_id(link):
                continue
            seen.add(link)
            found = branch.load(claim_kind.KIND, link)
            if found is not None:
                stack.append((found, [*path, link]))
    return None


def contradict(
    kb: KB, actor: str, a_id: str, b_id: str, reason: str | None = None
) -> dict[str, Any]:
    """A and B disagree: each lists the other in `contradicts` (symmetric), and each
    becomes `contested` unless it is `stable`."""
    with gate_lock(kb):
        branch = Branch(kb)
        a = branch.claim(a_id, "contradicted claim")
        b = branch.claim(b_id, "contradicting claim")
        if a_id == b_id:
            refuse([f"claim {a_id} cannot contradict itself"], "contradiction")
        refuse(
            [
                f"claim {o.id} is {retired(o)}: a retired claim contradicts nothing"
                for o in (a, b)
                if retired(o)
            ],
            "contradiction",
        )
        for one, other in ((a, b), (b, a)):
            one.add_to("contradicts", other.id)
            if one.status != "stable":
                one.changes["status"] = "contested"
        changed = a.changed or b.changed
        message = (
            f"claims {a_id} and {b_id} contradict each other"
            if changed
            else f"claims {a_id} and {b_id} already contradict each other"
        )
        return land_edit(kb, "claim.contradict", [a, b], message, actor, reason=reason)


def archive(kb: KB, actor: str, object_id: str, reason: str | None = None) -> dict[str, Any]:
    """A claim or page goes out of use: status archived (search hides it)."""
    with gate_lock(kb):
        branch = Branch(kb)
        target = branch.find(object_id, "archived object", (claim_kind.KIND, page_kind.KIND))
        name = target.kind.name
        if target.status == "archived":
            return result(
                f"{name}.archive", [target], f"{name} {object_id} is already archived", None
            )
        if target.kind is claim_kind.KIND:
            why = retired(target)
            refuse(
                [f"claim {object_id} is {why}: it is already out of use"] if why else [], "archive"
            )
        target.changes["status"] = "archived"
        return land_edit(
            kb, f"{name}.archive", [target], f"{name} {object_id} is archived", actor, reason=reason
        )


def confirm(kb: KB, actor: str, object_id: str) -> dict[str, Any]:
    """Someone checked the claim again: last_confirmed_at = now (staleness counts from
    it). The claim's status does not move; `promote` moves it."""
    with gate_lock(kb):
        branch = Branch(kb)
        target = branch.claim(object_id, "confirmed claim")
        why = retired(target)
        refuse(
            [f"claim {object_id} is {why}: confirm the knowledge that replaced it"] if why else [],
            "confirmation",
        )
        now = ids.now_iso()
        target.changes["last_confirmed_at"] = now
        return land_edit(
            kb,
            "claim.confirm",
            [target],
            f"claim {object_id} confirmed at {now}",
            actor,
            touch=False,
        )


def cite(kb: KB, actor: str, object_id: str, evidence: str) -> dict[str, Any]:
    """Append one citation to a claim: a registered source id, an evidence id, or a
    `<source-sha256>:L10-L20` pointer, which creates the evidence in the same commit (as
    a proposal does). Every citation is checked against the branch; a superseded source
    version is refused in favour of the current one."""
    with gate_lock(kb):
        branch = Branch(kb)
        target = branch.claim(object_id, "citing claim")
        if target.status == "redacted":
            refuse([f"claim {object_id} is redacted and stays so"], "citation")
        cited, extra = citation(branch, evidence.strip())
        if cited in target.ids_in("evidence"):
            return result("claim.cite", [target], f"claim {object_id} already cites {cited}", None)
        target.add_to("evidence", cited)
        return land_edit(
            kb,
            "claim.cite",
            [target],
            f"claim {object_id} now cites {cited}",
            actor,
            data={"evidence": cited},
            extra=extra,
            extra_ids=[cited] if extra else [],
        )


def citation(branch: Branch, item: str) -> tuple[str, dict[str, bytes]]:
    """The id a citation adds, and the evidence file to create for a pointer."""
    pointer = evidence_ptr.parse_pointer(item)
    if pointer is not None:
        sid, locator = pointer
        _check_current_source(branch, sid)
        obj, errors = evidence_ptr.make(
            sid, locator, None, source_kind.read_content(branch.blob, sid)
        )
        if obj is None:
            raise ValidationFailed(errors, what="citation")
        rel = evidence_kind.path_for(obj["id"])
        made = {} if branch.blob(rel) is not None else {rel: evidence_kind.dump(obj).encode()}
        return str(obj["id"]), made
    if ids.is_source_id(item):
        _check_current_source(branch, item)
        return item, {}
    if ids.is_object_id(item):
        data = branch.blob(evidence_kind.path_for(item))
        if data is None:
            raise ValidationFailed(
                [f"evidence {item} does not exist on {branch.name}"], what="citation"
            )
        found = evidence_kind.load(data.decode("utf-8", "replace"), where=item)
        _check_current_source(branch, str(found["source_id"]))
        return item, {}
    raise ValidationFailed(
        [f"evidence {item!r} is not a source id, evidence id or <source-id>:<locator> pointer"],
        what="citation",
    )


def _check_current_source(branch: Branch, sid: str) -> None:
    data = branch.blob(source_kind.path_for(sid)) if ids.is_source_id(sid) else None
    if data is None:
        raise ValidationFailed(
            [f"source {sid[:12]}… is not registered on {branch.name}"], what="citation"
        )
    meta = source_kind.load(data.decode("utf-8", "replace"), where=sid)
    if source_kind.is_redacted(meta):
        raise ValidationFailed(
            [f"source {sid[:12]}… was redacted by a decision: it cannot be cited"],
            what="citation",
        )
    if meta.get("superseded_by"):
        raise ValidationFailed(
            [
                f"source {sid[:12]}… is a superseded version of "
                f"{meta.get('locator')}; cite its current version "
                f"{meta['superseded_by']}"
            ],
            what="citation",
        )


def promote(
    kb: KB, actor: str, object_id: str, status: str | None = None, reason: str | None = None
) -> dict[str, Any]:
    """A reviewer's step up the ladder working → actionable → stable (one rung by
    default). Never down, never for a retired claim, never for a contested claim whose
    contradiction is still live, never by the claim's own proposer."""
    from vouch.gate.committed import settings_at
    from vouch.gate.deciders import self_allowed
    from vouch.gate.identity import fold

    with gate_lock(kb):
        branch = Branch(kb)
        target = branch.claim(object_id, "promoted claim")
        current = target.status
        why = retired(target)
        refuse(
            [f"claim {object_id} is {why}: only live claims are promoted"] if why else [],
            "promotion",
        )
        if status is not None and status not in PROMOTIONS:
            refuse([f"status {status!r} is not one of: {', '.join(PROMOTIONS)}"], "promotion")
        wanted = status or _next_rung(current)
        if wanted is None or current == wanted:
            return result(
                "claim.promote", [target], f"claim {object_id} is already {current}", None
            )
        if current in LADDER and LADDER.index(current) > LADDER.index(wanted):
            refuse(
                [f"claim {object_id} is {current}: promotion only moves up ({' → '.join(LADDER)})"],
                "promotion",
            )
        if current == "contested":
            live = [c for c in target.ids_in("contradicts") if _is_live(branch, c)]
            refuse(
                [
                    f"claim {object_id} is contested by {', '.join(live)}: resolve that "
                    "first (supersede or archive one side)"
                ]
                if live
                else [],
                "promotion",
            )
        if fold(str(target.get("proposed_by") or "")) == fold(actor) and not self_allowed(
            settings_at(kb, str(branch.tip))
        ):
            raise GateRefused(
                f"{actor} proposed claim {object_id} and cannot also promote it",
                hint="another reviewer promotes it",
            )
        target.changes["status"] = wanted
        return land_edit(
            kb,
            "claim.promote",
            [target],
            f"claim {object_id} is promoted from {current} to {wanted}",
            actor,
            reason=reason,
            data={"from": current, "to": wanted},
        )


def _next_rung(status: str) -> str | None:
    if status == "contested":
        return "actionable"
    if status in LADDER[:-1]:
        return LADDER[LADDER.index(status) + 1]
    return None


def _is_live(branch: Branch, claim_id: str) -> bool:
    found = branch.load(claim_kind.KIND, claim_id) if ids.is_object_id(claim_id) else None
    return found is not None and retired(found) is None
