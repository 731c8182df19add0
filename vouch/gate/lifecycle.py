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

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile, GateRefused, NotFound, ValidationFailed
from vouch.kinds import Kind, Obj
from vouch.kinds import claim as claim_kind
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import page as page_kind
from vouch.kinds import source as source_kind
from vouch.store import evidence as evidence_ptr
from vouch.store import writer
from vouch.store.kb import KB
from vouch.store.landing import gate_lock

RETIRED = claim_kind.HIDDEN_STATUSES  # superseded, archived, redacted: hidden from search
LADDER = ("working", "actionable", "stable")
PROMOTIONS = ("actionable", "stable")
_MAX_CHAIN = 10_000  # a supersession walk longer than this is a corrupt history


# -- who may ------------------------------------------------------------------------------
def agents_may_change(kb: KB) -> bool:
    """`review.agent_lifecycle` as committed on the checked-out branch: may an agent
    (JSONL, MCP) change approved knowledge? Read like the gate's settings, from the
    commit, never from an uncommitted edit of the work tree. Default: no."""
    from vouch.gate.decide import gate_settings

    tip = kb.repo.peek("HEAD")
    return tip is not None and gate_settings(kb, tip).get("review.agent_lifecycle") is True


# -- the objects a change touches ---------------------------------------------------------
@dataclass
class _Object:
    """One approved object as committed, and the field changes to land on it."""

    kind: Kind
    id: str
    path: str  # .vouch-relative
    text: str
    obj: Obj
    changes: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str) -> Any:
        return self.changes[name] if name in self.changes else self.obj.get(name)

    @property
    def status(self) -> str:
        return str(self.get("status") or "")

    def ids_in(self, name: str) -> list[str]:
        return list(self.get(name) or [])

    def add_to(self, name: str, value: str) -> None:
        if value not in self.ids_in(name):
            self.changes[name] = [*self.ids_in(name), value]

    @property
    def changed(self) -> bool:
        return any(self.obj.get(k) != v for k, v in self.changes.items())

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind.name, "id": self.id, "status": self.status or None}


class _Branch:
    """Approved knowledge: what the checked-out branch's tip commits (not the work tree)."""

    def __init__(self, kb: KB):
        self.kb = kb
        self.branch = kb.repo.head_branch()
        self.tip = kb.repo.peek(self.branch)

    @property
    def name(self) -> str:
        return self.branch.removeprefix("refs/heads/")

    def blob(self, rel: str) -> bytes | None:
        if self.tip is None:
            return None
        found = self.kb.repo.store.read(f"{self.tip}:{self.kb.rel(rel)}")
        return found[1] if found and found[0] == "blob" else None

    def load(self, kind: Kind, object_id: str) -> _Object | None:
        rel = kind.path_for(object_id)
        data = self.blob(rel)
        if data is None:
            return None
        where = f"{self.name}:{self.kb.rel(rel)}"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptFile(f"{where} is not UTF-8 text") from exc
        return _Object(kind, object_id, rel, text, kind.load(text, where=where))

    def find(
        self, object_id: str, role: str, kinds: tuple[Kind, ...] = (claim_kind.KIND,)
    ) -> _Object:
        """The approved object, or NotFound (InvalidId for what is not an id at all)."""
        ids.check_id(object_id, f"{role} id")
        if ids.is_object_id(object_id):
            for kind in kinds:
                found = self.load(kind, object_id)
                if found is not None:
                    return found
        what = " or ".join(k.name for k in kinds)
        raise NotFound(
            f"{role} {object_id} is not an approved {what} on {self.name}",
            hint=self._why_missing(object_id),
        )

    def _why_missing(self, object_id: str) -> str:
        from vouch.gate.propose import pending_for

        if ids.is_proposal_id(object_id):
            return "that is a proposal id: approve it, then change the object it adds"
        pending = pending_for(self.kb, object_id) if ids.is_object_id(object_id) else None
        if pending:
            return (
                f"it is still pending in proposal {pending}: approve it first, or "
                "propose again to change it"
            )
        return (
            "lifecycle changes apply to approved objects on the checked-out branch "
            "(`vouch list claims` shows them)"
        )

    def claim(self, object_id: str, role: str = "claim") -> _Object:
        return self.find(object_id, role)


def _refuse(problems: list[str], what: str) -> None:
    if problems:
        raise ValidationFailed(problems, what=what)


def _retired(obj: _Object) -> str | None:
    """Why `obj` no longer takes part (superseded, archived, redacted), else None."""
    if obj.status == "superseded" and obj.get("superseded_by"):
        return f"superseded by {obj.get('superseded_by')}"
    return obj.status if obj.status in RETIRED else None


def _one_line(text: str | None) -> str | None:
    """A reason as a commit trailer: one line of printable text."""
    if not text:
        return None
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return line[:500] or None


def _result(
    event: str, objects: Iterable[_Object], message: str, commit: str | None
) -> dict[str, Any]:
    return {
        "ok": True,
        "changed": commit is not None,
        "event": event,
        "commit": commit,
        "objects": [o.describe() for o in objects],
        "message": message,
    }


def _land(
    kb: KB,
    event: str,
    objects: list[_Object],
    message: str,
    actor: str,
    *,
    reason: str | None = None,
    data: dict[str, Any] | None = None,
    extra: dict[str, bytes] | None = None,
    extra_ids: Iterable[str] = (),
    touch: bool = True,
) -> dict[str, Any]:
    """Edit every changed object in place and commit them with one audit event, which
    names every object whose file the commit writes (`extra`: new files, `extra_ids`:
    theirs); nothing at all when nothing changes."""
    changed = [o for o in objects if o.changed]
    if not changed:
        return _result(event, objects, message, None)
    now = ids.now_iso()
    files: dict[str, bytes] = dict(extra or {})
    for o in changed:
        changes = dict(o.changes)
        if touch and "updated_at" in o.kind.field_names:
            changes["updated_at"] = now
        files[o.path] = o.kind.edit(o.text, changes, where=kb.rel(o.path)).encode()
        o.changes = changes
    verb = event.split(".", 1)[1]
    subject = f"vouch: {verb} {objects[0].kind.name} {objects[0].id}"
    commit = writer.commit_direct(
        kb,
        files,
        subject=subject,
        event=event,
        actor=actor,
        object_ids=[*(o.id for o in objects), *extra_ids],
        data={**(data or {}), **({"reason": reason} if reason else {})},
        extra_trailers={"Vouch-Object": objects[0].id, "Vouch-Reason": _one_line(reason)},
    )
    return _result(event, objects, message, commit)


# -- the changes --------------------------------------------------------------------------
def supersede(
    kb: KB, actor: str, old_id: str, new_id: str, reason: str | None = None
) -> dict[str, Any]:
    """`old` is replaced by `new`: old.status = superseded, old.superseded_by = new,
    new.supersedes += old. Supersession is directional and acyclic."""
    with gate_lock(kb):
        branch = _Branch(kb)
        old = branch.claim(old_id, "superseded claim")
        new = branch.claim(new_id, "replacement claim")
        if old_id == new_id:
            _refuse([f"claim {old_id} cannot supersede itself"], "supersession")
        if (
            old.get("superseded_by") == new_id
            and old.status == "superseded"
            and old_id in new.ids_in("supersedes")
        ):
            return _result(
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
        if not cycle and _retired(new):
            problems.append(
                f"the replacement {new_id} is {_retired(new)}: supersede by a live claim"
            )
        _refuse(problems, "supersession")
        old.changes.update(status="superseded", superseded_by=new_id)
        new.add_to("supersedes", old_id)
        return _land(
            kb,
            "claim.supersede",
            [old, new],
            f"claim {old_id} is superseded by {new_id}",
            actor,
            reason=reason,
            data={"superseded_by": new_id},
        )


def _replaced_by(branch: _Branch, new: _Object, old: _Object) -> list[str] | None:
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
    stack: list[tuple[_Object, list[str]]] = [(old, [old.id])]
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
        branch = _Branch(kb)
        a = branch.claim(a_id, "contradicted claim")
        b = branch.claim(b_id, "contradicting claim")
        if a_id == b_id:
            _refuse([f"claim {a_id} cannot contradict itself"], "contradiction")
        _refuse(
            [
                f"claim {o.id} is {_retired(o)}: a retired claim contradicts nothing"
                for o in (a, b)
                if _retired(o)
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
        return _land(kb, "claim.contradict", [a, b], message, actor, reason=reason)


def archive(kb: KB, actor: str, object_id: str, reason: str | None = None) -> dict[str, Any]:
    """A claim or page goes out of use: status archived (search hides it)."""
    with gate_lock(kb):
        branch = _Branch(kb)
        target = branch.find(object_id, "archived object", (claim_kind.KIND, page_kind.KIND))
        name = target.kind.name
        if target.status == "archived":
            return _result(
                f"{name}.archive", [target], f"{name} {object_id} is already archived", None
            )
        if target.kind is claim_kind.KIND:
            why = _retired(target)
            _refuse(
                [f"claim {object_id} is {why}: it is already out of use"] if why else [], "archive"
            )
        target.changes["status"] = "archived"
        return _land(
            kb, f"{name}.archive", [target], f"{name} {object_id} is archived", actor, reason=reason
        )


def confirm(kb: KB, actor: str, object_id: str) -> dict[str, Any]:
    """Someone checked the claim again: last_confirmed_at = now (staleness counts from
    it). The claim's status does not move; `promote` moves it."""
    with gate_lock(kb):
        branch = _Branch(kb)
        target = branch.claim(object_id, "confirmed claim")
        why = _retired(target)
        _refuse(
            [f"claim {object_id} is {why}: confirm the knowledge that replaced it"] if why else [],
            "confirmation",
        )
        now = ids.now_iso()
        target.changes["last_confirmed_at"] = now
        return _land(
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
        branch = _Branch(kb)
        target = branch.claim(object_id, "citing claim")
        if target.status == "redacted":
            _refuse([f"claim {object_id} is redacted and stays so"], "citation")
        cited, extra = _citation(branch, evidence.strip())
        if cited in target.ids_in("evidence"):
            return _result("claim.cite", [target], f"claim {object_id} already cites {cited}", None)
        target.add_to("evidence", cited)
        return _land(
            kb,
            "claim.cite",
            [target],
            f"claim {object_id} now cites {cited}",
            actor,
            data={"evidence": cited},
            extra=extra,
            extra_ids=[cited] if extra else [],
        )


def _citation(branch: _Branch, item: str) -> tuple[str, dict[str, bytes]]:
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


def _check_current_source(branch: _Branch, sid: str) -> None:
    data = branch.blob(source_kind.path_for(sid)) if ids.is_source_id(sid) else None
    if data is None:
        raise ValidationFailed(
            [f"source {sid[:12]}… is not registered on {branch.name}"], what="citation"
        )
    meta = source_kind.load(data.decode("utf-8", "replace"), where=sid)
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
    from vouch.gate.decide import TRUSTED_ROLE, gate_settings

    with gate_lock(kb):
        branch = _Branch(kb)
        target = branch.claim(object_id, "promoted claim")
        current = target.status
        why = _retired(target)
        _refuse(
            [f"claim {object_id} is {why}: only live claims are promoted"] if why else [],
            "promotion",
        )
        if status is not None and status not in PROMOTIONS:
            _refuse([f"status {status!r} is not one of: {', '.join(PROMOTIONS)}"], "promotion")
        wanted = status or _next_rung(current)
        if wanted is None or current == wanted:
            return _result(
                "claim.promote", [target], f"claim {object_id} is already {current}", None
            )
        if current in LADDER and LADDER.index(current) > LADDER.index(wanted):
            _refuse(
                [f"claim {object_id} is {current}: promotion only moves up ({' → '.join(LADDER)})"],
                "promotion",
            )
        if current == "contested":
            live = [c for c in target.ids_in("contradicts") if _is_live(branch, c)]
            _refuse(
                [
                    f"claim {object_id} is contested by {', '.join(live)}: resolve that "
                    "first (supersede or archive one side)"
                ]
                if live
                else [],
                "promotion",
            )
        if (
            target.get("proposed_by") == actor
            and gate_settings(kb, str(branch.tip)).get("review.approver_role") != TRUSTED_ROLE
        ):
            raise GateRefused(
                f"{actor} proposed claim {object_id} and cannot also promote it",
                hint="another reviewer promotes it",
            )
        target.changes["status"] = wanted
        return _land(
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


def _is_live(branch: _Branch, claim_id: str) -> bool:
    found = branch.load(claim_kind.KIND, claim_id) if ids.is_object_id(claim_id) else None
    return found is not None and _retired(found) is None
