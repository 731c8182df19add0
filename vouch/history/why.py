"""`vouch why ID`: where one piece of approved knowledge came from.

Read from the object file and the commits that changed it (one `git log` of its path):
the proposal that brought it (proposer, rationale, session) and its whole review thread
(every revision, every comment), the decision that merged it (approver, when, the merge
commit), the lifecycle edits since, its evidence — each with its source's path, the
cited lines themselves and the quote — what it supersedes or was superseded by, what
contradicts it, and when it was last confirmed. The title is the whole text, never cut.
What is shown is the object as vouch recorded it, never an edit made since outside it
(`recorded`: uncommitted in the work tree, or committed by hand after the decision),
and what differs is said.
"""

from __future__ import annotations

from typing import Any

from vouch.core.ids import check_id
from vouch.errors import GitFailure, NotFound
from vouch.history.citations import cite
from vouch.history.commits import Commit, read_log
from vouch.history.recorded import recorded
from vouch.history.snapshot import Snapshot
from vouch.kinds import GATED, KINDS, Obj
from vouch.store.kb import KB

# fields that name other objects, per kind, shown with those objects' titles
_LINKS = ("supersedes", "superseded_by", "contradicts", "entities", "claims")


def find(kb: KB, object_id: str) -> tuple[str, Obj]:
    """The gated object with this id in the work tree: (kind, object)."""
    check_id(object_id)
    for name in GATED:
        obj = kb.read(KINDS[name], object_id)
        if obj is not None:
            return name, obj
    raise NotFound(
        f"no claim, page, entity or relation {object_id}",
        hint="`vouch show ID` finds pending objects too; `vouch log` lists what changed",
    )


def label(snap: Snapshot, object_id: str) -> dict[str, Any]:
    """An id with its kind and title, for showing a link."""
    for name in ("claim", *(k for k in GATED if k != "claim"), "source"):
        obj = snap.object(name, object_id)
        if obj is not None:
            out = {"id": object_id, "kind": name, "title": KINDS[name].title_of(obj)}
            if obj.get("status"):
                out["status"] = obj["status"]
            return out
    return {"id": object_id, "kind": None, "title": None}


def why(kb: KB, object_id: str) -> dict[str, Any]:
    kind, work = find(kb, object_id)
    snap = Snapshot(kb)
    commits = read_log(kb, "HEAD", [kb.rel(KINDS[kind].path_for(object_id))])
    # what vouch recorded, not an edit made since outside it (`recorded`)
    obj, differs = recorded(kb, kind, object_id, work, commits, _title)
    decision = next(
        (c for c in commits if c.role == "decision" and c.trailer("Vouch-Object") == object_id),
        None,
    )
    proposal = _proposal(commits, decision)
    out: dict[str, Any] = {
        "id": object_id,
        "kind": kind,
        "title": _title(kind, obj),
        "status": obj.get("status"),
        "confidence": obj.get("confidence"),
        **differs,
        "proposed": _proposed(proposal, decision, obj),
        **_thread(kb, proposal, decision),
        "approved": _approved(decision),
        "added": _added(commits),
        "changes": [c.to_json() for c in commits if c.role == "event" and c is not decision],
        "evidence": [_evidence(snap, str(i)) for i in _citations(kind, obj)],
        "last_confirmed_at": obj.get("last_confirmed_at"),
    }
    for name in _LINKS:
        value = obj.get(name)
        if value:
            items = value if isinstance(value, list) else [value]
            out[name] = [label(snap, str(i)) for i in items]
    out["relations"] = _relations(kb, snap, object_id)
    return out


def _citations(kind: str, obj: Obj) -> list[str]:
    field = "sources" if kind == "page" else "evidence"
    return [str(i) for i in obj.get(field) or []]


def _title(kind: str, obj: Obj) -> str:
    """The object's title; a claim's whole text (a kind's title is cut for listings)."""
    if kind == "claim":
        return " ".join(str(obj.get("text") or "").split())
    return KINDS[kind].title_of(obj)


def _evidence(snap: Snapshot, item: str) -> dict[str, Any]:
    """One citation: its source, path (`cite_path`), quote and the cited lines
    (`excerpt`; `hidden` names any left out, with the command that prints them)."""
    found = cite(snap, item, context=0)
    keep = (
        "id",
        "kind",
        "source_id",
        "title",
        "locator",
        "cite_path",
        "source_locator",
        "source_superseded_by",
        "quote",
        "lines",
        "excerpt",
        "omitted",
        "hidden",
        "redacted",
        "problem",
    )
    return {k: found[k] for k in keep if found.get(k) is not None}


def _thread(kb: KB, proposal: Commit | None, decision: Commit | None) -> dict[str, Any]:
    """`revisions` and `comments` of the proposal that landed: every revision from its
    base (a revised claim's earlier text lives in files of other ids, which the object's
    own log never shows) and every comment, oldest first."""
    from vouch.gate import records
    from vouch.gate.thread import thread

    landed = decision or proposal
    sha = (decision.trailer("Vouch-Proposal-Commit") if decision else "") or (
        proposal.sha if proposal else ""
    )
    pid = landed.proposal_id if landed else None
    found = records.read_commit(kb, sha, f"merged/{pid}") if sha and pid else None
    if found is None:
        return {"revisions": [], "comments": []}
    try:
        revisions, comments = thread(kb, found)
    except GitFailure:  # a decision imported by a bundle: its proposal's commits are elsewhere
        return {"revisions": [], "comments": []}
    return {"revisions": revisions, "comments": comments}


def _proposal(commits: list[Commit], decision: Commit | None) -> Commit | None:
    wanted = decision.trailer("Vouch-Proposal-Commit") if decision else ""
    for c in commits:
        if c.role == "proposal" and (not wanted or c.sha == wanted):
            return c
    return None


def _proposed(proposal: Commit | None, decision: Commit | None, obj: Obj) -> dict[str, Any] | None:
    if proposal is None and decision is None:
        return None
    source = proposal or decision
    assert source is not None
    out: dict[str, Any] = {
        "proposal_id": source.proposal_id,
        "proposer": source.trailer("Vouch-Proposer") or obj.get("proposed_by"),
    }
    if proposal is not None:
        # who proposed is the proposal commit's author, never a trailer alone
        out.update(
            proposer=proposal.author,
            proposer_email=proposal.email,
            proposed_by=proposal.by,
            commit=proposal.sha,
            date=proposal.date,
            rationale=proposal.body or None,
            session_id=proposal.trailer("Vouch-Session") or obj.get("session_id"),
            base=proposal.trailer("Vouch-Base") or None,
        )
    return {k: v for k, v in out.items() if v is not None}


def _approved(decision: Commit | None) -> dict[str, Any] | None:
    if decision is None:
        return None
    return {
        "approver": decision.trailer("Vouch-Approver"),
        "approved_by": decision.by,
        "date": decision.date,
        "commit": decision.sha,
        "reason": decision.body or None,
    }


def _added(commits: list[Commit]) -> dict[str, Any] | None:
    """The oldest commit that changed the file: who brought it when no decision did."""
    return commits[-1].to_json() if commits else None


def _relations(kb: KB, snap: Snapshot, object_id: str) -> list[dict[str, Any]]:
    """Approved relations with this object at either end (`git grep` of relations/)."""
    from vouch.git import history

    rel_dir = kb.rel(KINDS["relation"].directory)
    out = []
    for path in history.grep_paths(kb.repo, [object_id], [rel_dir]):
        rid = path.rsplit("/", 1)[-1].removesuffix(KINDS["relation"].ext)
        rel = snap.object("relation", rid)
        if rel is None or object_id not in (rel.get("source"), rel.get("target")):
            continue
        other = rel["target"] if rel["source"] == object_id else rel["source"]
        out.append(
            {
                "id": rid,
                "relation": rel["relation"],
                "direction": "out" if rel["source"] == object_id else "in",
                "other": label(snap, str(other)),
            }
        )
    return sorted(out, key=lambda r: (r["relation"], r["id"]))
