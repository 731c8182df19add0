"""Each audit event against the commit that made it (DESIGN §4.1).

The audit log's chain proves its events were not edited in place; it cannot prove who
wrote them, since anyone can append a correctly chained line. So the log is read
together with the history of its files (one `git log` over the audit paths):

- every commit that changes the audit files is a vouch write entitled to append —
  a decision (`Vouch-Decision`: its trailers and its `decided/<proposal>.yaml`) or a
  direct write (`Vouch-Event`: registrations, lifecycle edits, sessions, imports) —
  or a plain merge of two branches' appends (git's union merge), which adds none;
- the events a commit added are the ones its head (`Vouch-Audit-Head`) reaches back to
  the events older commits already own, and they are exactly what that write makes:
  for a decision the proposal's creation and the decision, by the proposer and by the
  record's `decided_by`, naming the proposal and object of its trailers and record,
  and an approved object stamped `approved_by` the same actor; for a direct write one
  event, its `Vouch-Event` by its `Vouch-Actor`;
- every event of the log is owned by such a commit;
- with `review.require_signed_decisions` committed (on the commit's parent), a commit
  that decides or changes approved knowledge carries a good signature, by an allowed
  approver, who is the actor its events name.

What no local check can see — the same history rewritten consistently and unsigned —
is caught by an anchor kept outside every branch (`vouch.gate.anchor`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from vouch.core import ids, yamlio
from vouch.errors import CorruptFile
from vouch.gate import direct_writes, rollbacks, signers, withdrawals
from vouch.gate.changes import CHANGE
from vouch.gate.deciders import WITHDRAW_EVENT, WITHDRAWN_TRAILER, one_principal
from vouch.gate.purged import purged_ids
from vouch.gate.records import parse_message
from vouch.gate.signers import identities, same
from vouch.git.history import committers
from vouch.git.purge import ever_held
from vouch.kinds import KINDS
from vouch.store import audit, writer
from vouch.store.kb import DECIDED_DIR, KB, decided_path

# events of writes that register or record, never decide: no signature asked of them
INTAKE_EVENTS = direct_writes.INTAKE
_BLAME_LIMIT = 3  # unowned events whose adding commit is looked up (one git log -S each)
# commits whose events were found to be exactly what they make: a verdict that depends
# on the commit id alone (its tree, message and ancestors), kept in this clone's git
# directory where no branch can write, so a long history is read once
PROVEN = "audit-proven.txt"
IMPORT_EVENT = "bundle.import"  # the one direct write that adds decision records
_HINT = (
    "audit events are written only by the vouch command that made them: drop this "
    "commit from the branch (`git rebase -i`, or reset the branch to before it) and run "
    "the vouch command again if it recorded a real one"
)


@dataclass
class Finding:
    kind: str
    detail: str
    commit: str | None = None
    severity: str = "error"

    def to_verify(self) -> dict[str, Any]:
        """The shape of `vouch audit --verify` issues."""
        return {
            "file": None,
            "line": None,
            "detail": self.detail,
            "kind": self.kind,
            "commit": self.commit,
            "severity": self.severity,
        }


@dataclass
class Chain:
    """The committed log at one commit: events by hash, and who came before whom."""

    events: dict[str, dict[str, Any]] = field(default_factory=dict)
    prev: dict[str, str] = field(default_factory=dict)

    def ancestry(self, heads: Iterable[str]) -> set[str]:
        seen: set[str] = set()
        todo = [h for h in heads if h in self.events]
        while todo:
            node = todo.pop()
            if node in seen or node not in self.events:
                continue
            seen.add(node)
            if self.prev.get(node):
                todo.append(self.prev[node])
        return seen

    def tips(self) -> list[str]:
        """Events no other event names as its predecessor."""
        named = set(self.prev.values())
        return sorted(h for h in self.events if h not in named)


def audit_paths(kb: KB) -> list[str]:
    return [kb.rel(audit.LOG_NAME), kb.rel(audit.SEGMENT_DIR)]


def chain_at(kb: KB, rev: str) -> Chain:
    """Every event (with a hash that matches its body) of the audit files in `rev`."""
    repo = kb.repo
    blobs = repo.tree_blobs(rev, audit_paths(kb))
    chain = Chain()
    names = sorted(blobs)
    for found in repo.store.read_many([blobs[n] for n in names]):
        if found is None:
            continue
        for raw in found[1].split(b"\n"):
            record = audit.parse_line(raw) if raw.strip() else None
            if record is None or record.get("hash") != audit.event_hash(record):
                continue
            key = str(record["hash"])
            chain.events.setdefault(key, record)
            chain.prev[key] = str(record.get("prev_hash") or "")
    return chain


# -- the walk ------------------------------------------------------------------------------
@dataclass
class _Commit:
    sha: str
    parents: list[str]
    trailers: dict[str, list[str]]
    subject: str
    changes: list[Any]

    def one(self, key: str) -> str:
        return (self.trailers.get(key) or [""])[0].strip()


class _Check:
    def __init__(
        self,
        kb: KB,
        rev: str,
        policy: Callable[[str], tuple[bool, list[str]]] | None,
        report: set[str] | None,
    ):
        self.kb = kb
        self.rev = rev
        self.policy = policy  # commit -> (signatures required, allowed approvers)
        self.report = report  # commits whose findings are reported (None: all)
        self.findings: list[Finding] = []
        self.chain = chain_at(kb, rev)
        self.owner: dict[str, str] = {}
        self.suspects: list[str] = []  # plain commits and merges that touched the log
        self.flagged: set[str | None] = set()  # plain commits reported
        self.commits = 0
        self.proven = _load_proven(kb)
        self.skipped: set[str] = set()  # not judged here (outside a range)
        self.newly: list[str] = []
        self.purged: set[str] | None = None  # objects a purge took out of history

    def _taken(self, kind_name: str, oid: str) -> bool:
        """Did a purge take this approved object out of history (`vouch.gate.purged`)?"""
        if self.purged is None:
            self.purged = purged_ids(self.chain.events)
        kind = KINDS.get(kind_name)
        if oid not in self.purged or kind is None or not ids.is_object_id(oid):
            return False
        path = self.kb.rel(kind.path_for(oid))
        return not ever_held(self.kb.repo, self.rev, [path])

    def add(self, commit: str | None, kind: str, detail: str, severity: str = "error") -> None:
        if commit is None or self.report is None or commit in self.report:
            self.findings.append(Finding(kind, detail, commit, severity))

    def run(self) -> list[Finding]:
        from vouch.git import trail

        repo = self.kb.repo
        touched = trail.touching(repo, self.rev, audit_paths(self.kb))
        # a migration whose event a `git revert` took out of the log, and that revert
        gone = rollbacks.erased(self.kb, self.rev)
        touched = [t for t in touched if t.sha not in gone and t.sha not in gone.values()]
        texts = trail.messages(repo, [t.sha for t in touched])
        commits = []
        for t in touched:
            subject, _, trailers = parse_message(texts.get(t.sha, ""))
            commits.append(_Commit(t.sha, t.parents, trailers, subject, t.changes))
        self.commits = len(commits)
        decisions: list[tuple[_Commit, list[str]]] = []
        directs: list[tuple[_Commit, list[str]]] = []
        for c in commits:
            if c.one("Vouch-Decision"):
                decisions.append((c, self._own(c)))
            elif c.one("Vouch-Event"):
                directs.append((c, self._own(c)))
            elif len(c.parents) > 1:
                self.suspects.append(c.sha)  # a plain merge: what it adds nobody owns
            else:
                self.suspects.append(c.sha)
                self.flagged.add(c.sha)
                self._plain(c)
        if self.report is not None:  # a range: its commits alone are judged
            self.skipped = {c.sha for c, _ in [*decisions, *directs]} - self.report
        for c, added in directs:
            if c.sha not in self.proven and c.sha not in self.skipped:
                self._direct(c, added)
                self._overreach(c)
        self._decisions(
            [d for d in decisions if d[0].sha not in self.proven and d[0].sha not in self.skipped]
        )
        self._hands([d for d, _ in decisions if d.sha not in self.proven | self.skipped])
        self._approvers([d for d in [*decisions, *directs] if d[0].sha not in self.proven])
        self._unowned()
        self._records({c.sha for c in commits})
        self._signatures([*decisions, *directs])
        failed = {f.commit for f in self.findings}
        self.newly = [
            c.sha
            for c, _ in [*decisions, *directs]
            if c.sha not in self.proven and c.sha not in failed and c.sha not in self.skipped
        ]
        if self.report is None:  # a range skips checks `lint --since` makes itself
            _save_proven(self.kb, self.newly)
        return self.findings

    def _records(self, audited: set[str]) -> None:
        """Decision records are written only by the decision that made them: a commit
        that adds, edits or deletes a file under `decided/` must be a vouch write that
        also made its audit events (`audited`: it changed the audit log) — a decision
        adding exactly its own record, or a direct write (an import) adding records —
        never a plain commit, and never an edit or a deletion of an existing record
        (a forged approval or rejection, or a re-sealed hand edit, otherwise needs no
        event at all). Merges carry no diff here: what they bring was judged on its
        side branch."""
        from vouch.git import trail

        repo = self.kb.repo
        prefix = self.kb.rel(DECIDED_DIR) + "/"
        touched = [t for t in trail.touching(repo, self.rev, [prefix]) if len(t.parents) < 2]
        texts = trail.messages(repo, [t.sha for t in touched])
        for t in touched:
            subject, _, trailers = parse_message(texts.get(t.sha, ""))
            c = _Commit(t.sha, t.parents, trailers, subject, t.changes)
            changed = [ch for ch in t.changes if ch.path.startswith(prefix)]
            problem = None
            if not (c.one("Vouch-Decision") or c.one("Vouch-Event")):
                problem = "changes decision records but is not a vouch decision"
            elif t.sha not in audited:
                problem = "changes decision records without the audit events a decision makes"
            elif any(ch.old is not None for ch in changed):
                problem = "edits or deletes an existing decision record (records are written once)"
            elif not c.one("Vouch-Decision") and c.one("Vouch-Event") != IMPORT_EVENT:
                # only a decision writes its record, and an import copies a bundle's
                problem = f"adds decision records, which a {c.one('Vouch-Event')} write never does"
            elif c.one("Vouch-Decision"):
                own = self.kb.rel(decided_path(c.one("Vouch-Proposal")))
                if [ch.path for ch in changed] != [own]:
                    problem = "adds a decision record other than its own"
            if problem:
                self.add(
                    t.sha,
                    "decision-outside-vouch",
                    f"commit {t.sha[:12]} ({subject[:60]}) {problem}; {_HINT}",
                )

    def _own(self, c: _Commit) -> list[str]:
        """The events `c` added: back from its head to the first event an older commit
        owns. A commit written before vouch recorded heads: the lines it added."""
        head = c.one(writer.AUDIT_HEAD)
        if not head:
            return self._added_lines(c)
        if head not in self.chain.events:
            self.add(
                c.sha,
                "audit-head-missing",
                f"commit {c.sha[:12]} ({c.subject[:60]}) recorded audit event {head[:12]}…, "
                "which the log no longer holds: events were dropped or rewritten",
            )
            return []
        added = []
        node = head
        while node and node in self.chain.events and node not in self.owner:
            self.owner[node] = c.sha
            added.append(node)
            node = self.chain.prev.get(node, "")
        return added[::-1]

    def _added_lines(self, c: _Commit) -> list[str]:
        repo = self.kb.repo
        before: set[str] = set()
        after: list[str] = []
        olds = [ch.old for ch in c.changes if ch.old]
        news = [ch.new for ch in c.changes if ch.new]
        for found in repo.store.read_many(olds):
            if found is not None:
                before.update(self._hashes(found[1]))
        for found in repo.store.read_many(news):
            if found is not None:
                after += self._hashes(found[1])
        added = [h for h in after if h not in before and h in self.chain.events]
        added = [h for h in dict.fromkeys(added) if h not in self.owner]
        for h in added:
            self.owner[h] = c.sha
        return added

    @staticmethod
    def _hashes(data: bytes) -> list[str]:
        out = []
        for raw in data.split(b"\n"):
            record = audit.parse_line(raw) if raw.strip() else None
            if record is not None and isinstance(record.get("hash"), str):
                out.append(record["hash"])
        return out

    def _events(self, added: list[str]) -> list[dict[str, Any]]:
        return [self.chain.events[h] for h in added]

    def _plain(self, c: _Commit) -> None:
        what = "a proposal commit" if c.one("Vouch-Proposal") else "not a vouch commit"
        forged = " and types its own Vouch-Audit-Head trailer" if c.one(writer.AUDIT_HEAD) else ""
        self.add(
            c.sha,
            "audit-outside-vouch",
            f"commit {c.sha[:12]} ({c.subject[:60]}) changes the audit log but is {what}"
            f"{forged}; {_HINT}",
        )

    def _direct(self, c: _Commit, added: list[str]) -> None:
        event = c.one("Vouch-Event")
        problem = direct_writes.foreign(event) or self._unlike(c, event, self._events(added))
        if problem:
            self.add(
                c.sha,
                "audit-mismatch",
                f"commit {c.sha[:12]} ({c.subject[:60]}) {problem}; {_HINT}",
            )

    @staticmethod
    def _unlike(c: _Commit, event: str, made: list[dict[str, Any]]) -> str | None:
        """How the events a direct write added differ from the one its trailers name."""
        actor = c.one("Vouch-Actor")
        if len(made) != 1:
            return f"adds {len(made)} audit events; a {event} write adds exactly one"
        if made[0].get("event") != event:
            return f"adds a {made[0].get('event')} event, not the {event} it records"
        if not same(made[0].get("actor"), actor):
            return f"adds an event by {made[0].get('actor')!r}, but its Vouch-Actor is {actor!r}"
        if c.one("Vouch-Object") and c.one("Vouch-Object") not in (made[0].get("object_ids") or []):
            return f"adds an event that does not name its object {c.one('Vouch-Object')}"
        return None

    def _overreach(self, c: _Commit) -> None:
        """A direct write changes only what its event may (`direct_writes`); in a range,
        `lint --since` judges every commit's own changes itself."""
        if self.report is not None:
            return
        event = c.one("Vouch-Event")
        found = direct_writes.overreach(self.kb, event, c.sha, c.parents)
        if found:
            prefix = self.kb.rel(".") + "/"
            detail = direct_writes.describe(c.sha, event, found, prefix)
            self.add(c.sha, "audit-outside-vouch", f"{detail}; {_HINT}")

    def _hands(self, decisions: list[_Commit]) -> None:
        """An approval committed by its proposer's own git identity (`hands`)."""
        from vouch.gate import committed, hands

        settings = committed.Settings(self.kb)
        rows = [(c.sha, c.parents, c.one) for c in decisions]
        for sha, detail in hands.findings(self.kb, rows, settings.at):
            self.add(sha, "self-approved", detail)

    def _approvers(self, made: list[tuple[_Commit, list[str]]]) -> None:
        """With `review.approvers` committed on a commit's parent, a decision (and a
        lifecycle edit or import) is made by one of them: its approver or actor, or the
        git identity that committed it — as `lint --since` judges a range by its base."""
        if self.report is not None or not made:
            return
        listed_at = signers.committed_policy(self.kb)
        wanted = []
        for c, _ in made:
            event = c.one("Vouch-Event")
            if not c.one("Vouch-Decision") and event not in (
                direct_writes.EDITS | {direct_writes.IMPORT}
            ):
                continue
            if withdrawals.by_proposer(c.one):  # a proposer's own: no approver needed
                continue
            approvers = listed_at(c.parents[0] if c.parents else "")[1]
            if approvers:
                wanted.append((c, approvers))
        made_by = committers(self.kb.repo, [c.sha for c, _ in wanted])
        for c, approvers in wanted:
            actor = c.one("Vouch-Approver") if c.one("Vouch-Decision") else c.one("Vouch-Actor")
            listed = {x for a in approvers for x in identities(a)}
            who = {x for v in (actor, *made_by.get(c.sha, ("", ""))) for x in identities(v)}
            if not who & listed:
                self.add(
                    c.sha,
                    "approver-not-allowed",
                    f"commit {c.sha[:12]} ({c.subject[:60]}) was made by "
                    f"{actor or made_by.get(c.sha, ('?',))[0]!r}, who is not in the "
                    "review.approvers committed before it",
                )

    def _decisions(self, decisions: list[tuple[_Commit, list[str]]]) -> None:
        kb = self.kb
        names = []
        stamps = []
        for c, _ in decisions:
            # trailers are hostile text: only well-formed ids become object names
            pid, oid = c.one("Vouch-Proposal"), c.one("Vouch-Object")
            kind = KINDS.get(c.one("Vouch-Kind"))
            names.append(
                f"{c.sha}:{kb.rel(decided_path(pid))}" if ids.is_proposal_id(pid) else c.sha
            )
            good = kind is not None and ids.is_object_id(oid)
            stamps.append(f"{c.sha}:{kb.rel(kind.path_for(oid))}" if kind and good else c.sha)
        records = kb.repo.store.read_many(names)
        objects = kb.repo.store.read_many(stamps)
        for (c, added), rec, obj in zip(decisions, records, objects, strict=True):
            problem = self._decision(c, self._events(added), rec, obj)
            if problem:
                self.add(
                    c.sha,
                    "audit-mismatch",
                    f"decision commit {c.sha[:12]} ({c.subject[:60]}) {problem}; {_HINT}",
                )

    def _decision(
        self,
        c: _Commit,
        made: list[dict[str, Any]],
        rec: tuple[str, bytes] | None,
        obj: tuple[str, bytes] | None,
    ) -> str | None:
        pid, oid = c.one("Vouch-Proposal"), c.one("Vouch-Object")
        decision = c.one("Vouch-Decision")
        verb = {"approved": "proposal.approve", "rejected": "proposal.reject"}.get(decision)
        if verb is None:
            return f"records decision {decision!r}, which is not approved or rejected"
        record = _record(rec)
        if record is None:
            return f"holds no readable decision record decided/{pid}.yaml"
        withdrawn, problem = withdrawal(c.one(WITHDRAWN_TRAILER), decision, record)
        if problem:
            return problem
        verb = WITHDRAW_EVENT if withdrawn else verb
        for key, want in (
            ("proposal_id", pid),
            ("decision", decision),
            ("object_id", oid),
            ("kind", c.one("Vouch-Kind")),
        ):
            if str(record.get(key) or "") != want:
                return f"has a decision record whose {key} is {record.get(key)!r}, not {want!r}"
        if [m.get("event") for m in made] != ["proposal.create", verb]:
            got = ", ".join(str(m.get("event")) for m in made) or "none"
            return f"adds the audit events [{got}]; a decision adds proposal.create, {verb}"
        for m in made:
            if list(m.get("object_ids") or []) != [pid, oid]:
                named = m.get("object_ids")
                return f"adds a {m.get('event')} event naming {named}, not [{pid}, {oid}]"
        if not same(made[0].get("actor"), record.get("proposer")):
            return (
                f"records proposer {record.get('proposer')!r}, but its proposal.create event "
                f"names {made[0].get('actor')!r}"
            )
        if not same(made[1].get("actor"), record.get("decided_by")):
            return (
                f"records decided_by {record.get('decided_by')!r}, but its {verb} event "
                f"names {made[1].get('actor')!r}"
            )
        if (
            decision == "approved"
            and c.one("Vouch-Kind") != CHANGE  # a change stamps nothing
            and not (obj is None and self._taken(c.one("Vouch-Kind"), oid))
        ):
            stamped = _approved_by(obj)
            if not same(stamped, record.get("decided_by")):
                return (
                    f"records decided_by {record.get('decided_by')!r}, but the "
                    f"{c.one('Vouch-Kind')} it approved says approved_by {stamped!r}"
                )
        return None

    def _unowned(self) -> None:
        """Events no vouch commit owns; blamed on the plain commit or merge that added
        them (a few, each one `git log -S` over those commits only)."""
        from vouch.git import trail

        loose = [h for h in self.chain.events if h not in self.owner]
        if not loose:
            return
        paths = audit_paths(self.kb)
        adders = {
            h: trail.adder(self.kb.repo, self.suspects, h, paths) for h in loose[:_BLAME_LIMIT]
        }
        if self.report is not None and not any(a in self.report for a in adders.values() if a):
            return  # a range: only what one of its commits brought in
        if len(loose) <= _BLAME_LIMIT and all(a in self.flagged for a in adders.values()):
            return  # each came with a plain commit already reported
        first = loose[0]
        record = self.chain.events[first]
        by = adders.get(first)
        self.add(
            None,
            "audit-unowned",
            f"{len(loose)} audit event(s) were made by no vouch commit, e.g. "
            f"{record.get('event')} by {record.get('actor')!r} ({first[:12]}…)"
            + (f", added by commit {by[:12]}" if by else "")
            + f"; {_HINT}",
        )

    def _signatures(self, made: list[tuple[_Commit, list[str]]]) -> None:
        if self.policy is None:
            return
        wanted: list[tuple[_Commit, list[str], list[str]]] = []
        for c, added in made:
            if not c.one("Vouch-Decision") and c.one("Vouch-Event") in INTAKE_EVENTS:
                continue
            if self.report is not None and c.sha not in self.report:
                continue
            required, approvers = self.policy(c.parents[0] if c.parents else "")
            if required:
                wanted.append((c, added, approvers))
        if not wanted:
            return
        found = signers.verified(self.kb, [c.sha for c, _, _ in wanted])
        made_by = committers(self.kb.repo, [c.sha for c, _, _ in wanted])
        for c, added, approvers in wanted:
            sig = found.get(c.sha)
            what = f"commit {c.sha[:12]} ({c.subject[:60]})"
            if sig is None or not sig.good:
                self.add(
                    c.sha,
                    "audit-unsigned",
                    f"{what} adds audit events without a good signature, and "
                    "review.require_signed_decisions asks for one; "
                    "a decision made again by its approver, signed, replaces it",
                )
                continue
            signer = identities(sig.signer)
            listed = {x for a in approvers for x in identities(a)}
            if approvers and not signer & listed and not withdrawals.by_proposer(c.one):
                self.add(
                    c.sha,
                    "audit-unsigned",
                    f"{what} is signed by {sig.signer!r}, who is not in review.approvers",
                )
                continue
            actors = [self.chain.events[h].get("actor") for h in added][-1:]
            if actors and not signer & _acting(str(actors[0]), c, made_by.get(c.sha)):
                self.add(
                    c.sha,
                    "audit-signer",
                    f"{what} is signed by {sig.signer!r} but its audit event names "
                    f"{actors[0]!r}: the signer is who acted",
                )


def _acting(actor: str, c: _Commit, committer: tuple[str, str] | None) -> set[str]:
    """The forms the actor of a signed commit may be signed as: its name, the email the
    decision recorded for it (`Vouch-Approver-Email`), and the committer's email when the
    committer is the actor (a person acting as themselves). All of it is in the signed
    commit, so none of it can be changed without the signature failing."""
    forms = identities(actor) | identities(c.one("Vouch-Approver-Email"))
    if committer is not None and same(committer[0], actor):
        forms |= identities(committer[1])
    return forms


def _load_proven(kb: KB) -> set[str]:
    try:
        return set((kb.state_dir / PROVEN).read_text(encoding="ascii").split())
    except (OSError, UnicodeDecodeError):
        return set()


def _save_proven(kb: KB, shas: list[str]) -> None:
    """Remember commits found sound (best effort: a clone without a writable git
    directory checks them again next time)."""
    if not shas:
        return
    with contextlib.suppress(OSError):
        kb.state_dir.mkdir(parents=True, exist_ok=True)
        with open(kb.state_dir / PROVEN, "a", encoding="ascii") as fh:
            fh.write("".join(f"{sha}\n" for sha in shas))


_RECORD_KEYS = ("proposal_id", "decision", "kind", "object_id", "proposer", "decided_by")


def _record(found: tuple[str, bytes] | None) -> dict[str, Any] | None:
    """The fields of a decision record the check compares. The top-level lines vouch
    writes are read directly (~50x faster than a parse); anything else — a quoted
    value, a repeated key, a missing one — goes through the YAML reader."""
    if found is None or found[0] != "blob":
        return None
    try:
        text = found[1].decode("utf-8")
    except UnicodeDecodeError:
        return None
    fields: dict[str, str] = {}
    for line in text.split("\n"):
        key, sep, value = line.partition(": ")
        if key == "withdrawn":
            break  # read whole: a withdrawal is checked against the e-mails too
        if sep and key in _RECORD_KEYS:
            if key in fields or not yamlio.reads_as_itself(value):
                break
            fields[key] = value
    else:
        if len(fields) == len(_RECORD_KEYS):
            return fields
    with contextlib.suppress(CorruptFile):
        return yamlio.load_yaml(text, where="decision record")
    return None


def withdrawal(trailer: str, decision: str, record: dict[str, Any]) -> tuple[bool, str | None]:
    """(whether the decision is a withdrawal, what is wrong with it). An honest one is a
    rejection by its own proposer, and its trailer and its record both say so."""
    said = record.get("withdrawn") in (True, "true")
    if (trailer == "true") != said:
        return (
            said,
            f"says {WITHDRAWN_TRAILER}: {trailer or '(none)'} but its record withdrawn: {said}",
        )
    if not said:
        return False, None
    if decision != "rejected":
        return True, f"records a withdrawal that is {decision!r}, not rejected"
    proposer_email, decider_email = record.get("proposer_email"), record.get("decider_email")
    if not one_principal(
        str(record.get("decided_by") or ""),
        str(decider_email) if decider_email else None,
        str(record.get("proposer") or ""),
        str(proposer_email) if proposer_email else None,
    ):
        return True, (
            f"records a withdrawal by {record.get('decided_by')!r} of a proposal by "
            f"{record.get('proposer')!r}: only its proposer withdraws a proposal"
        )
    return True, None


def _approved_by(found: tuple[str, bytes] | None) -> str | None:
    """The `approved_by` of an object file, read from its one line (no full parse)."""
    if found is None or found[0] != "blob":
        return None
    for line in found[1].decode("utf-8", "replace").splitlines():
        if line.startswith("approved_by:"):
            value = line[len("approved_by: ") :]
            if line.startswith("approved_by: ") and yamlio.reads_as_itself(value):
                return value
            with contextlib.suppress(CorruptFile):
                parsed = yamlio.load_yaml(line, where="approved_by").get("approved_by")
                return None if parsed is None else str(parsed)
    return None


def check(
    kb: KB,
    rev: str,
    *,
    policy: Callable[[str], tuple[bool, list[str]]] | None = None,
    report: set[str] | None = None,
) -> tuple[list[Finding], dict[str, Any]]:
    """Findings for the audit history of `rev` (only those of the commits in `report`,
    when given), and what was checked."""
    from vouch.git.history import is_shallow

    if is_shallow(kb.repo):
        return [
            Finding(
                "history-shallow",
                "this clone's history is shallow, so which commit made each audit event "
                "cannot be checked (fetch the whole history: `git fetch --unshallow`)",
                severity="warn",
            )
        ], {"commits": 0}
    checker = _Check(kb, rev, policy, report)
    findings = checker.run()
    return findings, {"commits": checker.commits, "events": len(checker.chain.events)}
