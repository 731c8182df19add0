"""Approved knowledge as vouch wrote it: the objects whose bytes differ from their seal.

A seal (`vouch.gate.seals`) is the blob a vouch write left for an object file: the
decision record names what `approve` landed, and each lifecycle write's audit event
names the blob it changed and the one it left. Following those links from the approval
gives the bytes the file must hold now; any other bytes were written by hand (an edit
committed with `--no-verify`, on a clone without the hook, or not committed yet). The
check compares blob ids — git's index and `git diff-files` for the work tree, the tree
for a commit — and parses nothing but the decision records lint loads anyway and the
audit lines that carry a seal.

Objects approved before seals existed (a decision record without `blobs`, and no
sealed lifecycle write since) fall back to history, one `git log` over their paths: the
newest commit that changed the file must be vouch's (a decision or a vouch direct
commit: its trailers say so) and the work tree must hold what it committed. The first
sealed lifecycle write of such an object starts its chain from the bytes it found.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vouch.gate import purged, seals
from vouch.gate.changes import CHANGE
from vouch.git import history
from vouch.health.files import DECISION, GitView, View, catalog
from vouch.health.issues import Issue, error
from vouch.health.rules import Knowledge, Obj
from vouch.kinds import KINDS
from vouch.store import audit
from vouch.store.kb import KB, decided_path

_LIFECYCLE = "vouch supersede, contradict, archive, confirm, cite or promote"


@dataclass(frozen=True)
class Seal:
    blob: str
    by: str  # what recorded it: a proposal id (`decision`), else words for the message
    decision: bool = False

    def recorder(self, k: Knowledge) -> str:
        if self.decision:
            return f"its decision record {k.path(decided_path(self.by))}"
        return self.by


def _dirs(kb: KB) -> list[str]:
    return [kb.rel(d) for d in seals.GATED_DIRS]


def current(view: View, only: Iterable[str] | None = None) -> dict[str, str]:
    """`.vouch/`-relative path -> blob of each knowledge file of `view` (of `only`).
    A commit's tree names them; in the work tree they are the index's blobs, and the
    bytes' blob only for the files git's stat check finds changed or untracked."""
    wanted = [r for r in (view.listing if only is None else only) if r in view.listing]
    wanted = [r for r in wanted if seals.is_gated(r)]
    if isinstance(view, GitView):
        return {r: b for r in wanted if (b := view.listing[r]) is not None}
    repo = view.kb.repo
    staged = history.index_blobs(repo, _dirs(view.kb))
    changed = history.unstaged_paths(repo, _dirs(view.kb)) if staged else set()
    out: dict[str, str] = {}
    for rel in wanted:
        path = view.prefix + rel
        blob = staged.get(path) if path not in changed else None
        if blob is None:
            data = view.read(rel)
            blob = repo.blob_id(data) if data is not None else None
        if blob is not None:
            out[rel] = blob
    return out


def decided(records: Iterable[Obj]) -> dict[str, Seal | None]:
    """The object file each approved record decided -> its seal (None: a record made
    before seals existed). Several records for one file: the newest decides. A record
    seals only its own object's file."""
    out: dict[str, Seal | None] = {}
    when: dict[str, str] = {}
    for record in records:
        if record.get("decision") != "approved" or record.get("kind") == CHANGE:
            continue  # a change's edits are sealed in its audit event, as a lifecycle write's
        oid, pid = str(record["object_id"]), str(record["proposal_id"])
        stamp = str(record.get("decided_at") or "")
        blobs = record.get(seals.FIELD)
        found: list[tuple[str, Seal | None]] = []
        if isinstance(blobs, dict) and blobs:
            found = [
                (rel, Seal(blob, pid, decision=True))
                for rel, blob in blobs.items()
                if isinstance(rel, str)
                and isinstance(blob, str)
                and rel.rpartition("/")[2].startswith(oid + ".")
                and seals.is_gated(rel)
            ]
        else:
            kind = KINDS.get(str(record.get("kind")))
            try:
                found = [(kind.path_for(oid), None)] if kind is not None else []
            except (TypeError, ValueError):
                continue
            found = [(rel, seal) for rel, seal in found if seals.is_gated(rel)]
        for rel, seal in found:
            if rel in when and when[rel] > stamp:
                continue
            when[rel] = stamp
            out[rel] = seal
    return out


def lifecycle(view: View) -> dict[str, dict[str, tuple[str, str]]]:
    """path -> {blob before -> (blob after, who)} from the sealed audit events of
    `view`, oldest first (a later write from the same bytes wins)."""
    edges: dict[str, dict[str, tuple[str, str]]] = {}
    for data in _audit_files(view):
        for line in data.split(b"\n"):
            if b'"' + seals.FIELD.encode() + b'"' not in line:
                continue
            record = audit.parse_line(line)
            if record is None or record.get("hash") != audit.event_hash(record):
                continue
            body = record.get("data")
            blobs = body.get(seals.FIELD) if isinstance(body, dict) else None
            if not isinstance(blobs, dict):
                continue
            who = (
                f"the {record.get('event')} by {record.get('actor')} "
                f"at {record.get('created_at')} (audit event {record.get('id')})"
            )
            for rel, pair in blobs.items():
                if (
                    isinstance(rel, str)
                    and isinstance(pair, list)
                    and len(pair) == 2
                    and all(isinstance(b, str) for b in pair)
                ):
                    edges.setdefault(rel, {})[pair[0]] = (pair[1], who)
    return edges


def made_by_changes(view: View, approved: set[str]) -> set[str]:
    """The evidence ids approved change proposals created (a re-citation's new span,
    named as `made` in its approval's audit event): a decision's merge commit adds them,
    and a merge shows git no diff to credit them by."""
    out: set[str] = set()
    for data in _audit_files(view):
        for line in data.split(b"\n"):
            if b'"made"' not in line:
                continue
            record = audit.parse_line(line)
            if record is None or record.get("hash") != audit.event_hash(record):
                continue
            body, named = record.get("data"), record.get("object_ids") or []
            if record.get("event") != "proposal.approve" or not isinstance(body, dict):
                continue
            made = body.get("made")
            if body.get("change") and named and named[0] in approved and isinstance(made, list):
                out.update(m for m in made if isinstance(m, str))
    return out


def _audit_files(view: View) -> list[bytes]:
    if isinstance(view, GitView):
        names = sorted(r for r in view.listing if r.startswith(audit.SEGMENT_DIR + "/"))
        names += [audit.LOG_NAME] if audit.LOG_NAME in view.listing else []
        return [d for d in (view.read(n) for n in names) if d is not None]
    out = []
    for path in audit.log_files(view.kb.dir):
        try:
            out.append(path.read_bytes())
        except OSError:
            continue
    return out


def expected(start: Seal | None, edges: dict[str, tuple[str, str]]) -> Seal | None:
    """The seal a file must match now: its approval's, moved along each lifecycle write
    from those bytes. Without an approval seal, the bytes the first sealed lifecycle
    write started from (an object approved before seals existed); None: no seal."""
    if start is None:
        if not edges:
            return None
        start = Seal(next(iter(edges)), "the first lifecycle write that recorded it")
    node, seen = start, {start.blob}
    while node.blob in edges:
        after, who = edges[node.blob]
        if after in seen:
            break
        node = Seal(after, who)
        seen.add(after)
    return node


# -- the check ------------------------------------------------------------------------------
def check(k: Knowledge, records: Iterable[Obj], only: Iterable[str] | None = None) -> list[Issue]:
    """Approved objects of `k`'s view (those of `only`, `.vouch/`-relative) whose bytes
    differ from their seal. Objects without an approved record are provenance's to
    report (no-decision), not this check's."""
    view = k.view
    kb = view.kb
    now = current(view, only)
    approved = decided(records)
    # the whole view (lint, doctor): an approved object whose file is gone was deleted
    gone = sorted(r for r in approved if r not in view.listing) if only is None else []
    if gone:  # a person's `vouch forget --purge-history` took these out of history
        files = {kb.rel(r): r.rsplit("/", 1)[-1].split(".", 1)[0] for r in gone}
        took = purged.taken(kb, files, _audit_files(view))
        gone = [r for r in gone if kb.rel(r) not in took]
    edges = lifecycle(view) if gone or any(r in approved for r in now) else {}
    ends = {rel: expected(approved[rel], edges.get(rel, {})) for rel in gone}
    # a deletion a person approved (`vouch delete`) ends the chain with seals.DELETED
    issues = [_deleted(k, rel, s) for rel, s in ends.items() if not s or s.blob != seals.DELETED]
    unsealed: list[str] = []
    differs: dict[str, Seal] = {}
    for rel, blob in sorted(now.items()):
        if rel not in approved:
            continue
        seal = expected(approved[rel], edges.get(rel, {}))
        if seal is None:
            unsealed.append(rel)
        elif seal.blob != blob:
            differs[rel] = seal
    if not unsealed and not differs:
        return issues
    repo = kb.repo
    head = repo.peek("HEAD")
    committed = repo.tree_blobs(head, _dirs(kb)) if head and unsealed else {}
    in_history = [view.prefix + r for r in unsealed if committed.get(view.prefix + r) == now[r]]
    writers = history.last_writers(repo, head, _dirs(kb), in_history) if head else {}
    made_by = _vouch_commits(kb, writers.values())
    for rel in unsealed:
        path = view.prefix + rel
        writer = writers.get(path)
        if committed.get(path) != now[rel]:
            issues.append(
                _issue(
                    rel,
                    path,
                    "it differs from the last commit by no vouch write",
                    f"`git checkout HEAD -- {path}` undoes it",
                )
            )
        elif writer is None or not made_by.get(writer, (False, ""))[0]:
            subject = f" ({made_by.get(writer, (False, ''))[1][:60]})" if writer else ""
            made = f"commit {writer[:12]}{subject}" if writer else "a commit"
            issues.append(
                _issue(
                    rel,
                    path,
                    f"it was last changed by {made}, which vouch did not make",
                    f"`git revert {writer[:12]}` undoes it" if writer else "revert it",
                )
            )
    for rel, seal in differs.items():
        path = view.prefix + rel
        issues.append(
            _issue(
                rel,
                path,
                f"its bytes (blob {now[rel][:12]}) are not what {seal.recorder(k)} recorded "
                f"(blob {seal.blob[:12]})",
                f"`git cat-file blob {seal.blob} > {path}` restores them",
            )
        )
    return issues


def _deleted(k: Knowledge, rel: str, seal: Seal | None) -> Issue:
    path = k.view.prefix + rel
    if seal is not None:
        what = f"{seal.recorder(k)} names its bytes (blob {seal.blob[:12]}), the file is gone"
        undo = f"`git cat-file blob {seal.blob} > {path}` restores it"
    else:
        what = "its decision record names it, the file is gone"
        undo = f"restore it from before its deletion (`git log -1 -- {path}` names the commit)"
    return _issue(rel, path, what, f"{undo}; `vouch archive` retires knowledge", "deleted")


def _vouch_commits(kb: KB, commits: Iterable[str]) -> dict[str, tuple[bool, str]]:
    """commit -> (made by vouch: a decision or a vouch direct commit, its subject)."""
    from vouch.gate.records import parse_message

    out: dict[str, tuple[bool, str]] = {}
    for sha, message in history.commit_messages(kb.repo, commits).items():
        subject, _, trailers = parse_message(message)
        out[sha] = (bool(trailers.get("Vouch-Decision") or trailers.get("Vouch-Event")), subject)
    return out


def _issue(rel: str, path: str, what: str, undo: str, verb: str = "edited") -> Issue:
    entry = catalog(rel)
    kind = entry.kind if entry is not None else "object"
    oid = entry.id if entry is not None else None
    return error(
        "hand-edit",
        f"approved {kind} {verb} outside vouch: {what}. {undo[0].upper()}{undo[1:]}; "
        f"to change approved knowledge use the lifecycle commands ({_LIFECYCLE})",
        id=oid,
        path=path,
    )


def full(k: Knowledge, records: Iterable[Obj]) -> list[Issue]:
    """Every approved object of the view (the work tree: lint, doctor)."""
    return check(k, records)


def changed(k: Knowledge, paths: Iterable[str], **grep: Any) -> list[Issue]:
    """The approved objects at repository `paths` (a range's net change, a commit's
    staged edits), with the decision records that name them found by `git grep` in the
    view (`rev=` its commit, or `cached=True` for the index; default HEAD)."""
    start = k.view.prefix
    rels = [p[len(start) :] for p in paths if p.startswith(start)]
    rels = [r for r in rels if seals.is_gated(r) and r in k.view.listing]
    ids = [e.id for r in rels if (e := catalog(r)) is not None and e.id]
    if not ids:
        return []
    kb = k.view.kb
    where = grep or {"rev": kb.repo.peek("HEAD")}
    records = []
    for path in history.grep_paths(kb.repo, ids, [kb.rel("decided")], **where):
        entry = catalog(path[len(start) :]) if path.startswith(start) else None
        obj = k.load(entry) if entry is not None and entry.kind == DECISION else None
        if obj is not None:
            records.append(obj)
    return check(k, records, rels)


def restoring(k: Knowledge, paths: Iterable[str]) -> set[str]:
    """Of the staged edits at repository `paths`, those that put back exactly the bytes
    vouch last wrote (undoing a hand edit): a commit may record them."""
    wanted = list(paths)
    if not wanted:
        return set()
    still = {i["path"] for i in changed(k, wanted, cached=True)}
    start = k.view.prefix
    return {
        p
        for p in wanted
        if p not in still and p.startswith(start) and p[len(start) :] in k.view.listing
    }
