"""A session's proposals, read back from git, and crystallize: its summary as a proposal.

Every proposal made in a session carries the `Vouch-Session` trailer, so git alone says
which they are and where each stands: merged into HEAD's history (approved), kept
under `refs/vouch/rejected/` (rejected), or an open proposal branch (pending). Nothing
is recorded anywhere else while the session runs; `end_session` writes the list into
the session file.

`crystallize` turns a session into a proposed page of type `session`: what was proposed
and how it was decided, the approved claims it produced (linked from the page's
`claims`), and — flagged for review — the promotable ones: approved claims still on
the lower rungs (`working`, `actionable`), which a reviewer may promote (`vouch promote
ID`) once they have held up. It proposes; it never approves, and it promotes nothing.
The page is validated and reviewed like any other proposal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile, NotFound
from vouch.gate import pending, propose, records
from vouch.gate.identity import Identity
from vouch.kinds import KINDS, Obj
from vouch.kinds import claim as claim_kind
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import session as session_kind
from vouch.store import sessions
from vouch.store.kb import KB

TRAILER = "Vouch-Session"
PROMOTABLE = ("working", "actionable")  # approved, and a rung below stable
_FIELDS = ("%H", "%cI", "%B")


@dataclass(frozen=True)
class SessionProposal:
    proposal: records.Proposal
    state: str  # approved | merged-without-decision | rejected | pending

    def to_json(self) -> dict[str, Any]:
        p = self.proposal
        return {
            "proposal_id": p.id,
            "state": self.state,
            "kind": p.kind,
            "object_id": p.object_id,
            "title": p.title,
            "proposer": p.proposer,
        }


def session_proposals(kb: KB, session_id: str) -> list[SessionProposal]:
    """Every proposal made in the session, oldest first, with its state."""
    sessions.check_session_id(session_id)
    found: dict[str, SessionProposal] = {}
    head = kb.repo.resolve("HEAD")
    if head:
        for proposal in _merged(kb, session_id, head):
            decision = records.decision_of(kb, proposal.id, head) or {}
            state = decision.get("decision") or "merged-without-decision"
            found.setdefault(proposal.id, SessionProposal(proposal, str(state)))
    for proposal in records.read_proposals(kb, [records.REJECTED_PREFIX]):
        if proposal.session_id == session_id:
            found.setdefault(proposal.id, SessionProposal(proposal, "rejected"))
    for proposal in pending.open_proposals(kb):
        if proposal.session_id == session_id:
            found.setdefault(proposal.id, SessionProposal(proposal, "pending"))
    return sorted(found.values(), key=lambda s: s.proposal.id)


def _merged(kb: KB, session_id: str, head: str) -> list[records.Proposal]:
    """Proposal commits of the session in HEAD's history. They all descend from the
    commit that started the session (each proposal's base held the open session), so
    the walk stops there instead of reading the whole history."""
    path = kb.rel(session_kind.path_for(session_id))
    started = kb.repo.added_in(head, path)
    rev = f"{started}..{head}" if started else head
    out = []
    for parts in kb.repo.log_records(rev, _FIELDS, grep=f"{TRAILER}: {session_id}"):
        if len(parts) != 3:
            continue
        trailers = records.parse_message(parts[2])[2]
        pid = (trailers.get("Vouch-Proposal") or [""])[0]
        proposal = records.from_record([f"merged/{pid}", *parts])
        if (
            proposal is not None
            and proposal.session_id == session_id
            and "Vouch-Decision" not in proposal.trailers
        ):
            out.append(proposal)
    return out


def end_session(
    kb: KB, actor: str, session_id: str, transcript: str | None = None
) -> dict[str, Any]:
    """Close the session; the proposals made in it are counted and recorded, and its
    transcript (a registered transcript source) is attached when given."""
    return sessions.end(
        kb,
        actor,
        session_id,
        lambda: [s.proposal.id for s in session_proposals(kb, session_id)],
        transcript=transcript,
    )


# -- crystallize ---------------------------------------------------------------------------
def crystallize(
    kb: KB, actor: str | Identity, session_id: str, no_page: bool = False
) -> dict[str, Any]:
    """Propose the session's summary page (unless `no_page`) and flag its promotable
    claims. Result: {page_id, claims_promoted, proposal_id, promotable, proposals}."""
    head = kb.repo.resolve("HEAD")
    session = sessions.read_at(kb, session_id, head)
    if session is None:
        raise NotFound(f"no session {session_id} on this branch", hint=sessions.START_HINT)
    made = session_proposals(kb, session_id)
    assert head is not None  # the session was read from it
    claims = _approved_claims(kb, made, head)
    promotable = [c for c in claims if c.get("status") in PROMOTABLE]
    result: dict[str, Any] = {
        "page_id": None,
        "claims_promoted": len(promotable),
        "proposal_id": None,
        "session_id": session_id,
        "promotable": [c["id"] for c in promotable],
        "proposals": [s.to_json() for s in made],
    }
    if no_page:
        return result
    values = {
        "title": _title(session),
        "type": "session",
        "body": _body(session, made, claims, promotable),
        "claims": [c["id"] for c in claims] or None,
        "entities": [s.proposal.object_id for s in made if s.proposal.kind == "entity" and _live(s)]
        or None,
        "sources": _sources(kb, claims, head) or None,
        "tags": ["session"],
        "session_id": session_id,
    }
    rationale = (
        f"crystallize session {session_id}: {len(made)} proposal(s), "
        f"{len(promotable)} claim(s) flagged for review"
    )
    proposed = propose.require_valid(
        propose.propose(kb, actor, "page", values, rationale=rationale), "page"
    )
    result.update(page_id=proposed["page_id"], proposal_id=proposed["proposal_id"])
    if proposed.get("duplicate"):
        result["duplicate"] = proposed["duplicate"]
    return result


def _live(made: SessionProposal) -> bool:
    return made.state in ("approved", "merged-without-decision")


def _approved_claims(kb: KB, made: list[SessionProposal], head: str) -> list[Obj]:
    """The session's claims as they stand in HEAD, minus superseded/archived/redacted."""
    out = []
    for item in made:
        if item.proposal.kind != "claim" or not _live(item):
            continue
        obj = _object_at(kb, "claim", item.proposal.object_id, head)
        if obj is not None and obj.get("status") not in claim_kind.HIDDEN_STATUSES:
            out.append(obj)
    return out


def _object_at(kb: KB, kind: str, object_id: str, commit: str) -> Obj | None:
    if not ids.is_object_id(object_id):
        return None
    rel = KINDS[kind].path_for(object_id)
    blob = kb.repo.blob_at(commit, kb.rel(rel))
    if blob is None:
        return None
    try:
        return KINDS[kind].load(kb.repo.read_blob(blob).decode("utf-8"), where=rel)
    except (CorruptFile, UnicodeDecodeError):
        return None  # `vouch doctor` reports a broken file; a summary just leaves it out


def _sources(kb: KB, claims: list[Obj], head: str) -> list[str]:
    """The sources the claims cite, directly or through evidence."""
    out: dict[str, None] = {}
    for obj in claims:
        for cited in obj.get("evidence") or []:
            if ids.is_source_id(cited):
                out[cited] = None
            else:
                ev = _object_at(kb, evidence_kind.KIND.name, cited, head)
                if ev is not None:
                    out[str(ev["source_id"])] = None
    return list(out)


def _title(session: Obj) -> str:
    task = " ".join(str(session.get("task") or "").split())
    return f"Session: {task}" if task else f"Session {session['id']}"


def _one_line(text: object) -> str:
    return " ".join(str(text or "").split())


def _body(
    session: Obj, made: list[SessionProposal], claims: list[Obj], promotable: list[Obj]
) -> str:
    lines = [
        f"Session `{session['id']}`, opened by {_one_line(session.get('actor')) or '?'} "
        f"at {session.get('created_at')}"
        + (f", ended at {session['ended_at']}." if session.get("ended_at") else " (still open).")
    ]
    if session.get("note"):
        lines += ["", "> " + _one_line(session["note"])]
    counts: dict[str, int] = {}
    for item in made:
        counts[item.state] = counts.get(item.state, 0) + 1
    lines += ["", f"## Proposals ({len(made)})", ""]
    if counts:
        lines += [", ".join(f"{n} {state}" for state, n in sorted(counts.items())) + ".", ""]
    lines += [
        f"- {s.state}: {s.proposal.kind} `{s.proposal.object_id}` — "
        f"{_one_line(s.proposal.title)} (proposal `{s.proposal.id}`)"
        for s in made
    ] or ["No proposals were made in this session."]
    lines += ["", f"## Claims ({len(claims)})", ""]
    lines += [f"- {_one_line(c['text'])} (`{c['id']}`, {c.get('status')})" for c in claims] or [
        "No approved claims came out of this session."
    ]
    lines += ["", f"## For review: promotable claims ({len(promotable)})", ""]
    if promotable:
        lines += [
            "Approved in this session and not yet `stable`: a reviewer may promote "
            "each once it has held up (`vouch promote ID`).",
            "",
        ]
        lines += [
            f"- [ ] {_one_line(c['text'])} (`{c['id']}`, {c.get('status')})" for c in promotable
        ]
    else:
        lines += ["None."]
    return "\n".join(lines) + "\n"
