"""Proof of review in CI: every knowledge change between BASE and HEAD went through vouch.

`vouch lint --since BASE` walks the commits of BASE..HEAD and looks at what each one
changed itself under `.vouch/` (for a merge: what differs from every parent, so a plain
merge of two reviewed branches changes nothing of its own):

- a decision commit (`Vouch-Decision` trailer) may add or stamp the object it decides,
  write its decision record and append the audit log; its approver must be allowed
  (`review.approvers`, empty = anyone but the proposer) and, with
  `review.require_signed_decisions: true`, the commit must carry a good signature
  (`git verify-commit`: GPG or SSH, as the CI's git is configured to trust) whose
  signer is an allowed approver;
- a proposal commit (`Vouch-Proposal` without a decision) is fine once a decision commit
  in the range approved it; at HEAD of its own checked-out proposal branch, undecided,
  it is a pending proposal (a pull request from that branch), checked as `vouch approve`
  would check it — at the tip of any other branch it was merged without a decision;
- a vouch direct commit (`Vouch-Event`: source and evidence registration, lifecycle
  edits, imports) may register sources and evidence; when it changes approved knowledge
  (a lifecycle edit, or an import with its decision records) its actor answers for it
  like an approver (allowed, signed when required); otherwise it writes no decision
  record;
- any other commit that changes knowledge, evidence, sources or decision records
  bypassed the gate.

The rules come from the configuration committed on BASE: a pull request cannot relax
the review it is checked against. Without signatures the trailers say who acted, and
trailers can be typed by anyone: signed decisions are what make the proof hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vouch.core.config import CONFIG_NAME, Config
from vouch.errors import GateRefused, UsageError
from vouch.gate import direct_writes, rollbacks, signers, trusted_keys, withdrawals
from vouch.gate.committed import settings_at
from vouch.gate.identity import fold, forms
from vouch.gate.own_changes import own_changes
from vouch.health import settings_drift
from vouch.health.files import DECISION, catalog, prefix
from vouch.health.issues import Issue, error, warn
from vouch.health.provenance import TRUSTED_ROLE
from vouch.kinds import GATED
from vouch.store.kb import KB, PROPOSAL_PREFIX

_LOG_FIELDS = ("%H", "%P", "%cn", "%ce", "%cI", "%B")
_SIGNATURE = {
    "B": "a bad signature",
    "U": "a signature by a key git does not trust",
    "X": "an expired signature",
    "Y": "a signature by an expired key",
    "R": "a signature by a revoked key",
    "E": "a signature git cannot check",
    "N": "no signature",
}


@dataclass
class Commit:
    sha: str
    parents: list[str]
    committer: tuple[str, str]
    date: str
    message: str
    trailers: dict[str, list[str]]
    own: dict[str, str | None] = field(default_factory=dict)  # .vouch/-relative -> blob

    def trailer(self, key: str) -> str:
        return (self.trailers.get(key) or [""])[0]

    def area(self, rel: str) -> str:
        entry = catalog(rel)
        if entry is None:
            top = rel.split("/", 1)[0]
            if rel == "audit.log.jsonl" or top == "audit":
                return "audit"
            return "config" if rel == CONFIG_NAME else "other"
        if entry.kind == DECISION:
            return "decided"
        return entry.kind if entry.kind in (*GATED, "source", "evidence") else "other"


def since(kb: KB, base_rev: str) -> tuple[list[Issue], dict[str, Any]]:
    """Issues of every commit in BASE..HEAD, and what was checked."""
    from vouch.gate.records import parse_message
    from vouch.git import history

    repo = kb.repo
    head = repo.resolve("HEAD")
    base = repo.resolve(base_rev)
    if head is None:
        raise UsageError("this branch has no commits yet")
    if base is None:
        raise UsageError(
            f"--since {base_rev!r} is not a commit here",
            hint="in CI, fetch the base branch with its history "
            "(actions/checkout with fetch-depth: 0)",
        )
    start = history.merge_base(repo, base, head)
    if start is None:
        raise UsageError(f"{base_rev} and HEAD share no history")
    settings = settings_at(kb, base)
    commits = []
    for row in repo.log_records(f"{start}..{head}", _LOG_FIELDS):
        if len(row) < len(_LOG_FIELDS):
            continue
        sha, parents, name, email, date, body = row[:6]
        commit = Commit(sha, parents.split(), (name, email), date, body, parse_message(body)[2])
        commit.own = own_changes(kb, sha, commit.parents)
        commits.append(commit)
    cancelled = rollbacks.cancelled(kb, f"{start}..{head}")  # a migration, its revert
    commits = [c for c in commits if c.sha not in cancelled]
    checker = _Checker(kb, settings, head, base)
    issues = checker.run(commits)
    own = {c.sha: set(c.own) for c in commits}
    issues += settings_drift.drift(kb, settings, settings_at(kb, head), own, base, head)
    info = {
        "base": base,
        "merge_base": start,
        "head": head,
        "commits": len(commits),
        "decisions": checker.decisions,
        "approvers": checker.approvers,
        "require_signed_decisions": checker.require_signed,
    }
    return issues, info


def _allowed(approvers: list[str], *values: str) -> bool:
    """Whether `review.approvers` names any of these identities (name, e-mail or
    `Name <email>`), compared folded."""
    listed = {x for a in approvers for x in forms(a)}
    return bool(listed & {x for v in values for x in forms(v)})


class _Checker:
    def __init__(self, kb: KB, settings: Config, head: str, base: str):
        self.kb = kb
        self.head = head
        self.base = base
        self.settings = settings
        listed = settings.get("review.approvers") or []
        self.approvers = [str(a) for a in listed] if isinstance(listed, list) else []
        self.require_signed = settings.get("review.require_signed_decisions") is True
        self.trusted_self = settings.get("review.approver_role") == TRUSTED_ROLE
        self.decisions = 0
        self.issues: list[Issue] = []
        self.prefix = prefix(kb)
        self.branch = kb.repo.current_branch()

    def run(self, commits: list[Commit]) -> list[Issue]:
        answerable = [c for c in commits if self._answers(c)]
        signed: dict[str, Any] = {}
        if self.require_signed:
            trust = trusted_keys.at(self.kb, self.base)
            if trust.problem:
                self._add(error("review-signers", f"{trust.problem}: nothing it signs verifies"))
            shas = [c.sha for c in answerable]
            signed = signers.verified(self.kb, shas, judged_by=lambda _: trust)
        approved: dict[str, str] = {}
        for commit in commits:
            decision = commit.trailer("Vouch-Decision")
            if decision:
                approved.setdefault(commit.trailer("Vouch-Proposal"), decision)
        for commit in commits:
            if commit.trailer("Vouch-Decision"):
                self.decisions += 1
                self._decision(commit, signed)
            elif commit.trailer("Vouch-Proposal"):
                self._proposal(commit, approved)
            elif commit.trailer("Vouch-Event"):
                self._direct(commit, signed)
            else:
                self._outside(commit)
        return self.issues

    def _answers(self, commit: Commit) -> bool:
        """Decisions, and vouch commits that change approved knowledge."""
        if commit.trailer("Vouch-Decision"):
            return True
        return bool(commit.trailer("Vouch-Event")) and any(
            commit.area(rel) in GATED for rel in commit.own
        )

    def _add(self, issue: Issue) -> None:
        self.issues.append(issue)

    def _who(self, commit: Commit, actor: str, signed: dict[str, Any], what: str) -> None:
        """An approver (or lifecycle actor) must be allowed, and sign when asked to; a
        proposer withdrawing their own proposal needs no approver (`withdrawals`)."""
        cid = commit.sha[:12]
        listed = [] if withdrawals.by_proposer(commit.trailer) else self.approvers
        if self.require_signed:
            sig = signed.get(commit.sha)
            if sig is None or not sig.good:
                said = _SIGNATURE.get(sig.status if sig else "N", "no good signature")
                self._add(
                    error(
                        "unsigned-decision",
                        f"{what} commit {cid} has {said}; "
                        "review.require_signed_decisions asks for a good one",
                        id=commit.sha,
                    )
                )
                return
            if listed and not _allowed(listed, sig.signer):
                self._add(
                    error(
                        "approver-not-allowed",
                        f"{what} commit {cid} is signed by "
                        f"{sig.signer!r}, who is not in review.approvers",
                        id=commit.sha,
                    )
                )
            return
        # the git identity that made the commit (and vouch's record of it), never a
        # `--as` label; compared folded (`vouch.gate.identity`)
        if listed and not _allowed(listed, actor, *commit.committer):
            self._add(
                error(
                    "approver-not-allowed",
                    f"{what} commit {cid} was made by "
                    f"{actor or commit.committer[0]!r}, who is not in "
                    "review.approvers",
                    id=commit.sha,
                )
            )

    def _decision(self, commit: Commit, signed: dict[str, Any]) -> None:
        pid = commit.trailer("Vouch-Proposal")
        approver = commit.trailer("Vouch-Approver")
        proposer = commit.trailer("Vouch-Proposer")
        object_id = commit.trailer("Vouch-Object")
        allowed_self = self.trusted_self or (
            self.settings.get("review.allow_self_approval") is True
            and commit.trailer("Vouch-Self-Approved") == "true"
        )
        if (
            commit.trailer("Vouch-Decision") == "approved"
            and fold(approver) == fold(proposer)
            and not allowed_self
        ):
            self._add(
                error(
                    "self-approved",
                    f"{approver} approved their own proposal {pid} (commit {commit.sha[:12]})",
                    id=pid or commit.sha,
                )
            )
        self._who(commit, approver, signed, "decision")
        # a change's approval writes its edit itself (`gate.change_landing`): approved
        # objects it unlinks or re-points (sealed in its event), and for a redacted
        # source that source's own folder; nothing a proposer put on a branch lands
        change = commit.trailer("Vouch-Change") is not None
        for rel in commit.own:
            area = commit.area(rel)
            entry = catalog(rel)
            mine = entry is not None and entry.id in (object_id, pid)
            if area == "audit" or (mine and area in (*GATED, "decided")) or area == "evidence":
                continue
            if change and (area in GATED or (mine and area == "source")):
                continue
            self._add(
                error(
                    "outside-vouch",
                    f"decision commit {commit.sha[:12]} for {pid} also changes {self.prefix}{rel}",
                    id=pid or commit.sha,
                    path=self.prefix + rel,
                )
            )

    def _proposal(self, commit: Commit, approved: dict[str, str]) -> None:
        pid = commit.trailer("Vouch-Proposal")
        if approved.get(pid) == "approved":
            return
        if commit.sha == self.head and self.branch == PROPOSAL_PREFIX + pid:
            self._pending(commit, pid)
            return
        state = "was rejected" if approved.get(pid) else "has no decision"
        self._add(
            error(
                "merged-without-decision",
                f"proposal {pid} (commit "
                f"{commit.sha[:12]}) {state}, yet its content is in HEAD: it was "
                f"merged with git, not approved with vouch (`vouch show {pid}` then "
                f"`vouch approve {pid}` records the decision, or revert the merge)",
                id=pid,
            )
        )

    def _pending(self, commit: Commit, pid: str) -> None:
        """HEAD is an undecided proposal: a pull request from its branch. It must be
        exactly what vouch proposes; merging it is still a person's `vouch approve`."""
        from vouch.gate import records, verify

        proposal = records.from_record(
            [f"{PROPOSAL_PREFIX}{pid}", commit.sha, commit.date, commit.message]
        )
        if proposal is None:
            self._add(
                error(
                    "malformed-proposal",
                    f"commit {commit.sha[:12]} names proposal "
                    f"{pid!r} but is not a proposal vouch made",
                    id=commit.sha,
                )
            )
            return
        proposal = records.with_people(self.kb, proposal)  # its author proposed it
        require = self.settings.get("review.require_citations", True) is not False
        try:
            verify.check(self.kb, proposal, self.base, require_citations=require)
        except GateRefused as exc:
            self._add(error("malformed-proposal", exc.message, id=pid))
            return
        self._add(
            warn(
                "pending",
                f"proposal {pid} ({proposal.kind} {proposal.object_id}) "
                "is well-formed and awaits a decision: approve it with `vouch approve "
                f"{pid}`, not with the host's merge button",
                id=pid,
            )
        )

    def _direct(self, commit: Commit, signed: dict[str, Any]) -> None:
        event = commit.trailer("Vouch-Event")
        found = direct_writes.overreach(self.kb, event, commit.sha, commit.parents, commit.own)
        if found:
            rel = found[0][0]
            self._add(
                error(
                    "outside-vouch",
                    direct_writes.describe(commit.sha, event, found, self.prefix),
                    path=self.prefix + rel,
                    id=commit.sha,
                )
            )
        if self._answers(commit):
            # a lifecycle edit or an import (`bundle.import` brings knowledge with its
            # decision records): its actor answers for it like an approver
            self._who(commit, commit.trailer("Vouch-Actor"), signed, f"{event}")

    def _outside(self, commit: Commit) -> None:
        merge = len(commit.parents) > 1
        for rel in sorted(commit.own):
            area = commit.area(rel)
            path = self.prefix + rel
            entry = catalog(rel)
            oid = entry.id if entry is not None else None
            if area in (*GATED, "source", "evidence", "decided"):
                how = "merge" if merge else "commit"
                self._add(
                    error(
                        "outside-vouch",
                        f"{how} {commit.sha[:12]} "
                        f"({commit.message.splitlines()[0][:60] if commit.message else ''})"
                        f" changes {path} outside vouch: knowledge enters through "
                        "`vouch approve`, sources through `vouch source add`",
                        id=oid or commit.sha,
                        path=path,
                    )
                )
            elif area == "audit" and not merge:
                self._add(
                    warn(
                        "audit-edited",
                        f"commit {commit.sha[:12]} edits the audit log "
                        "outside vouch (`vouch audit --verify` checks it)",
                        id=commit.sha,
                        path=path,
                    )
                )
