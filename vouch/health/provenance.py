"""Did each durable object enter through vouch? The decision-record rules of lint.

Knowledge (claims, entities, relations, pages) enters only through a decision: each
object file has an approved record in `decided/` naming it, by someone other than its
proposer. Sources and evidence enter through their registration commits (`Vouch-Event`
trailer), or, for evidence a claim proposal created, through that proposal's decision.
A file that git holds without any of these was written by hand or merged with a plain
`git merge`: the gate was bypassed.

`full` checks every object of a view against the decision records and git history;
`staged` checks what a `git commit` is about to record — vouch itself never runs the
hooks, so knowledge staged by a person is knowledge entering by hand, unless it is a
vouch write cut short by a crash (its audit events are staged with it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vouch.core.config import Config
from vouch.gate.changes import CHANGE
from vouch.git.history import Change
from vouch.health.files import DECISION, catalog
from vouch.health.issues import Issue, error, warn
from vouch.health.rules import Knowledge, Obj, object_path
from vouch.kinds import GATED
from vouch.store import audit
from vouch.store.kb import KB, PROPOSAL_PREFIX

TRUSTED_ROLE = "trusted-agent"
_FIELDS = (
    "%H",
    "%(trailers:key=Vouch-Event,valueonly,separator=%x2C)",
    "%(trailers:key=Vouch-Proposal,valueonly,separator=%x2C)",
    "%(trailers:key=Vouch-Decision,valueonly,separator=%x2C)",
)


def self_approvals(k: Knowledge, records: Iterable[Obj], settings: Config) -> list[Issue]:
    """Approved decisions whose approver is the proposer (unless the committed
    configuration trusts agents to approve their own proposals)."""
    from vouch.gate.identity import fold

    if settings.get("review.approver_role") == TRUSTED_ROLE:
        return []
    alone = settings.get("review.allow_self_approval") is True
    return [
        error(
            "self-approved",
            f"{r['decided_by']} approved their own proposal ({r['kind']} {r['object_id']})",
            id=str(r["proposal_id"]),
            path=object_path(k, DECISION, str(r["proposal_id"])),
        )
        for r in records
        if r["decision"] == "approved"
        and not (alone and r.get("self_approved") is True)
        and (
            fold(str(r["decided_by"])) == fold(str(r["proposer"]))
            or (r.get("decider_email") and r.get("decider_email") == r.get("proposer_email"))
        )
    ]


def approved_objects(records: Iterable[Obj]) -> dict[str, Obj]:
    """object id -> its approved decision record."""
    return {
        str(r["object_id"]): r
        for r in records
        if r["decision"] == "approved" and r.get("kind") != CHANGE  # a change adds nothing
    }


def head_proposal(kb: KB) -> tuple[str, str, str] | None:
    """(proposal id, object id, commit) when the checked-out branch is a proposal branch
    at its undecided proposal commit: a proposal checked out for review (CI on its pull
    request). The same commit at the tip of any other branch was merged without a
    decision (a fast-forward `git merge`)."""
    from vouch.gate.records import parse_message

    repo = kb.repo
    branch = repo.current_branch()
    if repo.peek("HEAD") is None or not branch or not branch.startswith(PROPOSAL_PREFIX):
        return None
    rows = repo.log_records("HEAD", ["%H", "%B"], max_count=1)
    if not rows or len(rows[0]) < 2:
        return None
    trailers = parse_message(rows[0][1])[2]
    pid = (trailers.get("Vouch-Proposal") or [""])[0]
    if not pid or trailers.get("Vouch-Decision") or branch != PROPOSAL_PREFIX + pid:
        return None
    return pid, (trailers.get("Vouch-Object") or [""])[0], rows[0][0]


def full(k: Knowledge, records: list[Obj], settings: Config) -> list[Issue]:
    """Every object of the view, against the decision records and HEAD's history."""
    out = self_approvals(k, records, settings)
    approved = approved_objects(records)
    pending = head_proposal(k.view.kb)
    for (kind, oid), obj in sorted(k.objects.items()):
        if obj is None or kind not in GATED or oid in approved:
            continue
        where = object_path(k, kind, oid)
        if pending is not None and oid == pending[1]:
            out.append(
                warn(
                    "pending",
                    f"this {kind} is proposal {pending[0]}, checked out "
                    "for review: it awaits `vouch approve`",
                    id=oid,
                    path=where,
                )
            )
        else:
            out.append(
                error(
                    "no-decision",
                    f"this {kind} has no approved decision record: "
                    "it entered by hand or by a plain `git merge`, not through "
                    "`vouch approve`",
                    id=oid,
                    path=where,
                )
            )
    approved_ids = {str(r["proposal_id"]) for r in records if r["decision"] == "approved"}
    if pending is not None:
        approved_ids.add(pending[0])  # the evidence it adds is pending with it
    out += _registered(k, approved_ids)
    return out


def _registered(k: Knowledge, approved_proposals: set[str]) -> list[Issue]:
    """Sources and evidence that no vouch commit in HEAD's history added."""
    from vouch.git import history
    from vouch.health import sealed

    kb = k.view.kb
    wanted = [
        (kind, oid)
        for (kind, oid), obj in sorted(k.objects.items())
        if obj is not None and kind in ("source", "evidence")
    ]
    if not wanted:
        return []
    repo = kb.repo
    if repo.peek("HEAD") is None:
        adders: dict[str, list[str]] = {}
    elif history.is_shallow(repo):
        return [
            warn(
                "history-shallow",
                "this clone's history is shallow, so which commit "
                "registered each source and evidence cannot be checked (fetch the "
                "whole history: `git fetch --unshallow`)",
            )
        ]
    else:
        adders = {}
        for fields, paths in history.added_in_history(
            repo, "HEAD", [kb.rel("sources"), kb.rel("evidence")], _FIELDS
        ):
            for path in paths:
                adders.setdefault(path, fields)  # newest first: the last time it was added
    out: list[Issue] = []
    cut_short: dict[str, set[str]] = {}  # commit -> the objects its audit events name
    made: set[str] | None = None
    for kind, oid in wanted:
        where = object_path(k, kind, oid)
        assert where is not None
        adder = adders.get(where)
        problem = _adder_problem(kind, adder, approved_proposals)
        if problem and adder is None and kind == "evidence":  # a re-citation's new span
            if made is None:
                made = sealed.made_by_changes(k.view, approved_proposals)
            if oid in made:
                problem = None
        if problem and adder and not any(f.strip() for f in adder[1:4]):
            commit = adder[0].strip()
            if commit not in cut_short:
                cut_short[commit] = _named_by_added_events(k, commit)
            if oid in cut_short[commit]:
                problem = None  # a vouch write cut short, whose files a person committed
        if problem:
            out.append(error("not-registered", problem, id=oid, path=where))
    return out


def _named_by_added_events(k: Knowledge, commit: str) -> set[str]:
    """The objects named by the audit events `commit` added to the log: a commit made by
    a person (no vouch trailer) that holds a vouch write killed before its own commit —
    files and audit events together, as `staged` accepts them before such a commit."""
    from vouch.git import history

    repo = k.view.kb.repo
    parent = repo.resolve(f"{commit}^")
    if parent is None:
        return set()
    kb = k.view.kb
    paths = [kb.rel(audit.LOG_NAME), kb.rel(audit.SEGMENT_DIR)]
    events = new_audit_events(k, history.tree_diff(repo, parent, commit, paths))
    return {str(i) for e in events for i in e.get("object_ids") or ()}


def _adder_problem(kind: str, fields: list[str] | None, approved: set[str]) -> str | None:
    how = "`vouch source add`" if kind == "source" else "`vouch evidence add`"
    if fields is None or len(fields) < 4:
        return (
            f"no commit in HEAD's history added this {kind}: it was written by hand "
            f"(register it with {how}) or is not committed yet"
        )
    commit, event, proposal, decision = (f.strip() for f in fields[:4])
    if event:
        return None
    if proposal and not decision:
        if proposal in approved:
            return None
        return (
            f"added by proposal {proposal} (commit {commit[:12]}), which has no "
            "approved decision: it was merged with git, not approved with vouch"
        )
    return (
        f"added by commit {commit[:12]}, which vouch did not make (no Vouch-Event "
        f"trailer): registered by hand? Use {how}"
    )


# -- a commit being made -----------------------------------------------------------------------
def removed(k: Knowledge, changes: list[Change], since: str = "") -> list[Issue]:
    """Knowledge files and decision records that `changes` delete. Nothing vouch does
    deletes one (knowledge leaves use through the lifecycle: archive, supersede), so a
    deletion is a loss — a hand `git rm`, or a merge that dropped the other side's
    approvals (`-s ours`, a conflict resolved by deleting)."""
    prefix = k.view.prefix
    restore = f"git checkout {since} -- <path>" if since else "git checkout HEAD -- <path>"
    out = []
    for change in changes:
        if change.new is not None or change.old is None or not change.path.startswith(prefix):
            continue
        entry = catalog(change.path[len(prefix) :])
        if entry is None or (entry.kind not in GATED and entry.kind != DECISION):
            continue
        what = "decision record" if entry.kind == DECISION else str(entry.kind)
        out.append(
            error(
                "knowledge-lost",
                f"this {what} is deleted: nothing vouch does deletes approved knowledge or "
                f"its records (it leaves use by archive or supersede); restore it "
                f"(`{restore}`)",
                id=entry.id,
                path=change.path,
            )
        )
    return out


def audit_shrunk(k: Knowledge, changes: list[Change]) -> list[Issue]:
    """Staged audit files that lose lines: the log only grows (a truncation or an edit
    of an event is refused at commit time, as `doctor` and `lint --since` report it)."""
    prefix = k.view.prefix
    repo = k.view.kb.repo
    out = []
    for change in changes:
        rel = change.path[len(prefix) :] if change.path.startswith(prefix) else change.path
        if rel != audit.LOG_NAME and not rel.startswith(audit.SEGMENT_DIR + "/"):
            continue
        if change.old is None:
            continue
        old = [ln for ln in repo.read_blob(change.old).split(b"\n") if ln.strip()]
        new = set(repo.read_blob(change.new).split(b"\n")) if change.new is not None else set()
        lost = [ln for ln in old if ln not in new]
        if lost:
            out.append(
                error(
                    "audit-shrunk",
                    f"{len(lost)} audit event(s) removed or edited: the audit log only "
                    "grows; restore it (`git checkout HEAD -- <path>`)",
                    path=change.path,
                )
            )
    return out


def new_audit_events(k: Knowledge, changes: list[Change]) -> list[dict[str, Any]]:
    """Audit events the staged changes add (a vouch write cut short, then committed)."""
    before: set[bytes] = set()
    after: list[bytes] = []
    prefix = k.view.prefix
    repo = k.view.kb.repo
    for change in changes:
        rel = change.path[len(prefix) :] if change.path.startswith(prefix) else change.path
        if rel != audit.LOG_NAME and not rel.startswith(audit.SEGMENT_DIR + "/"):
            continue
        if change.old is not None:
            before.update(repo.read_blob(change.old).split(b"\n"))
        if change.new is not None:
            after += repo.read_blob(change.new).split(b"\n")
    events = []
    for line in after:
        if line.strip() and line not in before:
            record = audit.parse_line(line)
            if record is None:
                continue
            if isinstance(record, dict) and record.get("hash") == audit.event_hash(record):
                events.append(record)
    return events


def staged(k: Knowledge, changes: list[Change], settings: Config) -> list[Issue]:
    """Provenance of each staged knowledge file (repository paths in `changes`)."""
    events = new_audit_events(k, changes)
    named = {str(i) for e in events for i in e.get("object_ids") or ()}
    prefix = k.view.prefix
    entries = []
    for change in changes:
        rel = change.path[len(prefix) :] if change.path.startswith(prefix) else None
        entry = catalog(rel) if rel else None
        if entry is not None and entry.kind is not None and entry.id is not None:
            entries.append((change, entry))
    decided = [
        k.get(DECISION, e.id)
        for c, e in entries
        if e.kind == DECISION and c.new is not None and e.id is not None
    ]
    records = [r for r in decided if r is not None]
    out = self_approvals(k, records, settings)
    approved = {
        oid: r for oid, r in approved_objects(records).items() if str(r["proposal_id"]) in named
    }
    cleared: set[str] = set()
    edits: list[Issue] = []  # approved knowledge changed by hand
    for oid in approved:
        obj = k.get(str(approved[oid]["kind"]), oid)
        cleared.update(str(i) for i in (obj or {}).get("evidence") or ())
    for change, entry in entries:
        oid, kind = str(entry.id), str(entry.kind)
        where = change.path
        if kind == DECISION:
            if change.new is None or change.old is not None:
                out.append(
                    error(
                        "decision-record-edited",
                        "decision record "
                        + ("deleted" if change.new is None else "edited")
                        + ": a record is written once, by the decision that made it; "
                        "restore it (`git checkout HEAD -- <path>`)",
                        id=oid,
                        path=where,
                    )
                )
            elif oid not in named:
                out.append(
                    error(
                        "no-decision",
                        "decision record written by hand: no audit "
                        "event of vouch records this decision",
                        id=oid,
                        path=where,
                    )
                )
        elif kind in GATED:
            if change.status == "A" and oid not in approved:
                out.append(
                    error(
                        "no-decision",
                        f"{kind} added without a decision: knowledge "
                        "enters through `vouch propose-*` and `vouch approve`, not "
                        "`git commit`",
                        id=oid,
                        path=where,
                    )
                )
            elif change.status != "A" and oid not in named:
                edits.append(hand_edit(kind, oid, where, change.status))
        elif kind in ("source", "evidence") and oid not in named and oid not in cleared:
            if change.status == "A" and entry.part != "content":
                how = "`vouch source add`" if kind == "source" else "`vouch evidence add`"
                out.append(
                    error(
                        "not-registered",
                        f"{kind} added by hand: register it with {how}",
                        id=oid,
                        path=where,
                    )
                )
            elif change.status == "M" and kind == "source" and entry.part == "content":
                out.append(
                    error(
                        "source-changed",
                        "a registered source's bytes changed: "
                        "its id is their sha256 (register the new version with "
                        "`vouch source add`)",
                        id=oid,
                        path=where,
                    )
                )
            elif change.status != "A":
                verb = "deleted" if change.status == "D" else "edited"
                out.append(warn("hand-edit", f"{kind} {verb} by hand", id=oid, path=where))
    if edits:  # a change that puts back what vouch last wrote undoes a hand edit: fine
        from vouch.health.sealed import restoring

        back = restoring(k, [str(i["path"]) for i in edits if "edited by hand" in i["message"]])
        out += [i for i in edits if i["path"] not in back]
    return out


def hand_edit(kind: str, oid: str, where: str, status: str) -> Issue:
    """An approved object edited or deleted in a commit vouch did not make: refused."""
    verb = "deleted" if status == "D" else "edited"
    return error(
        "hand-edit",
        f"approved {kind} {verb} by hand in {where}: approved knowledge changes only "
        "through vouch's lifecycle commands (vouch supersede, contradict, archive, "
        "confirm, cite, promote), which keep the change reviewed and audited; restore "
        f"the file (`git restore --staged --worktree {where}`), or, if you mean it, "
        "commit with `git commit --no-verify`",
        id=oid,
        path=where,
    )
