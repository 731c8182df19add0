"""What a proposal is on disk: a branch, a commit message with trailers, a decision file.

A proposal is one commit on `refs/heads/vouch/proposal/<proposal-id>` whose message
carries `Vouch-*` trailers. Everything the gate needs to know about a proposal is read
back from those trailers, so a proposal fetched from another clone is as complete as a
local one.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile, GateRefused, InvalidId, NotFound, VouchError
from vouch.gate.identity import AGENT_DOMAIN, Identity, parse_who
from vouch.kinds import KINDS
from vouch.store.kb import KB, PROPOSAL_PREFIX, decided_path

REJECTED_PREFIX = "refs/vouch/rejected/"
REVIEWED_PREFIX = "refs/vouch/reviewed/"  # the commit `vouch show` last displayed
REMOTE_PREFIX = "refs/remotes/"
_TRAILER = re.compile(r"^(Vouch-[A-Za-z-]+): (.*)$")
_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# for-each-ref fields read for every proposal (one call for any number of branches)
REF_FIELDS = ("refname", "objectname", "creatordate:iso-strict", "contents")


@dataclass(frozen=True)
class Proposal:
    id: str
    ref: str
    commit: str
    kind: str
    object_id: str
    proposer: str
    base: str  # refs/heads/<branch> the proposal was made from
    base_commit: str
    session_id: str | None
    created_at: str
    title: str
    rationale: str
    trailers: dict[str, list[str]] = field(default_factory=dict)
    # who proposed, read from the commit itself (its author; the committer, when an
    # agent authored it, is the operator who ran it); never from a trailer alone
    proposer_email: str = ""
    operator: str | None = None

    @property
    def local(self) -> bool:
        return self.ref.startswith(PROPOSAL_PREFIX)

    @property
    def label(self) -> str | None:
        """The `--as` label the proposer typed (`Vouch-As`): shown, never trusted."""
        found = self.trailers.get("Vouch-As")
        return found[0] if found else None

    def identity(self) -> Identity:
        return Identity(
            self.proposer,
            self.proposer_email,
            agent=self.proposer_email.endswith("@" + AGENT_DOMAIN),
            operator=self.operator,
            label=self.label,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "proposal_id": self.id,
            "kind": self.kind,
            "object_id": self.object_id,
            "title": self.title,
            "proposer": self.proposer,
            "proposer_email": self.proposer_email,
            "proposed_by": self.identity().describe(),
            "base": self.base,
            "created_at": self.created_at,
            "rationale": self.rationale,
            "session_id": self.session_id,
            "ref": self.ref,
            "commit": self.commit,
        }


def is_proposal_id(value: object) -> bool:
    return isinstance(value, str) and ids.is_proposal_id(value)


def check_proposal_id(value: object) -> str:
    if not isinstance(value, str) or not ids.is_proposal_id(value):
        raise InvalidId(
            f"{value!r} is not a proposal id",
            hint="proposal ids look like 20260517-101500-1a2b3c4d (`vouch pending`)",
        )
    return value


def message(subject: str, body: str, trailers: dict[str, str | None]) -> str:
    # control characters never reach a commit message: a NUL or \x01 in a claim's text
    # would split the for-each-ref records the gate reads and hide the proposal
    subject, body = _CONTROL.sub(" ", subject), _CONTROL.sub(" ", body.replace("\r\n", "\n"))
    trailers = {k: _CONTROL.sub(" ", str(v)) if v else v for k, v in trailers.items()}
    lines = [" ".join(subject.split()), ""]
    if body.strip():
        # a rationale line that looks like a trailer is indented, so only the real
        # trailer block below can ever be read back as one
        lines += [
            "\n".join(" " + ln if _TRAILER.match(ln) else ln for ln in body.strip().split("\n")),
            "",
        ]
    # a trailer is one line: an actor or session name cannot smuggle in another trailer
    lines += [f"{k}: {' '.join(str(v).split())}" for k, v in trailers.items() if v]
    return "\n".join(lines) + "\n"


def parse_message(text: str) -> tuple[str, str, dict[str, list[str]]]:
    """(subject, body without trailers, trailers) — trailers only from the last paragraph."""
    paragraphs = text.strip("\n").split("\n\n")
    subject = paragraphs[0].split("\n", 1)[0]
    trailers: dict[str, list[str]] = {}
    last = paragraphs[-1].split("\n") if len(paragraphs) > 1 else []
    if last and all(_TRAILER.match(line) for line in last):
        for line in last:
            m = _TRAILER.match(line)
            assert m is not None
            trailers.setdefault(m.group(1), []).append(m.group(2).strip())
        paragraphs = paragraphs[:-1]
    body = "\n\n".join(paragraphs[1:]) if len(paragraphs) > 1 else ""
    return (
        subject,
        "\n".join(
            ln[1:] if _TRAILER.match(ln[1:]) and ln.startswith(" ") else ln
            for ln in body.split("\n")
        ).strip("\n"),
        trailers,
    )


def from_record(row: list[str]) -> Proposal | None:
    """A Proposal from one for-each-ref row; None for branches that are not proposals."""
    if len(row) < 4:
        return None
    ref, commit, created, contents = row[0], row[1], row[2], row[3]
    subject, body, trailers = parse_message(contents)

    def one(key: str) -> str:
        return (trailers.get(key) or [""])[0]

    pid = one("Vouch-Proposal")
    base_commit = one("Vouch-Base-Commit")  # a commit id or nothing: it reaches git
    if not ids.is_proposal_id(pid) or not ref.endswith("/" + pid):
        return None
    prefix = f"vouch: propose {one('Vouch-Kind')}: "
    title = subject[len(prefix) :] if subject.startswith(prefix) else subject
    return Proposal(
        id=pid,
        ref=ref,
        commit=commit,
        kind=one("Vouch-Kind"),
        object_id=one("Vouch-Object"),
        proposer=one("Vouch-Proposer"),
        base=one("Vouch-Base"),
        base_commit=base_commit if _COMMIT_ID.fullmatch(base_commit) else "",
        session_id=one("Vouch-Session") or None,
        created_at=created,
        title=title,
        rationale=body,
        trailers=trailers,
    )


MAX_REVISIONS = 50  # a longer chain of revisions is refused: nobody reviews 50 rewrites


def revision_of(proposal: Proposal) -> int:
    """Which revision a proposal commit is (`Vouch-Revision`; 1 without it), 0 if bad."""
    value = (proposal.trailers.get("Vouch-Revision") or ["1"])[0]
    return int(value) if value.isdigit() and len(value) < 6 else 0


def object_of(kb: KB, proposal: Proposal) -> dict[str, Any] | None:
    """The object a proposal's commit holds, or None when it cannot be read as one."""
    kind = KINDS.get(proposal.kind)
    if kind is None or not ids.is_object_id(proposal.object_id):
        return None
    path = kb.rel(kind.path_for(proposal.object_id))
    found = kb.repo.store.read(f"{proposal.commit}:{path}")  # a hostile tree: any type
    if not found or found[0] != "blob":
        return None
    with contextlib.suppress(CorruptFile, UnicodeDecodeError, ValueError):
        return kind.load(found[1].decode("utf-8"), where=path)
    return None


def read_commit(kb: KB, commit: str, ref: str) -> Proposal | None:
    """One commit read as a proposal (in-process), or None when it is not one."""
    found = kb.repo.store.read(commit)
    if found is None or found[0] != "commit":
        return None
    _, _, message = found[1].partition(b"\n\n")
    proposal = from_record([ref, commit, "", message.decode("utf-8", "replace")])
    return with_people(kb, proposal) if proposal else None


def people(kb: KB, commit: str) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """((author name, email), (committer name, email)) of a commit, read from the
    object itself (the first of each header line, as git reads it)."""
    found = kb.repo.store.read(commit)
    if found is None or found[0] != "commit":
        return None
    header = found[1].split(b"\n\n", 1)[0].decode("utf-8", "replace")
    got: dict[str, tuple[str, str]] = {}
    for line in header.split("\n"):
        role, _, rest = line.partition(" ")
        if role in ("author", "committer") and role not in got:
            got[role] = parse_who(rest.rsplit(" ", 2)[0] if rest.count(" ") >= 2 else rest)
    if "author" not in got or "committer" not in got:
        return None
    return got["author"], got["committer"]


def with_people(kb: KB, proposal: Proposal) -> Proposal:
    """The proposal with its proposer read from its commit: the author. A commit
    whose author differs from its committer was made by an agent its committer ran."""
    from dataclasses import replace

    found = people(kb, proposal.commit)
    if found is None:
        return replace(proposal, proposer="", proposer_email="")
    (name, email), (cname, cemail) = found
    operator = f"{cname} <{cemail}>" if (cname, cemail) != (name, email) else None
    return replace(proposal, proposer=name, proposer_email=email, operator=operator)


def read_proposals(kb: KB, patterns: list[str], *, unmerged: bool = False) -> list[Proposal]:
    """Proposals on the refs matching `patterns`, in one for-each-ref call; with
    `unmerged`, only those whose commit HEAD's history does not hold yet."""
    extra = ["--no-merged=HEAD"] if unmerged and kb.repo.peek("HEAD") else []
    rows = kb.repo.ref_records(patterns, REF_FIELDS, extra)
    # the proposer is the author of the proposal's first commit (`origin`)
    return [origin(kb, with_people(kb, p)) for p in (from_record(r) for r in rows) if p is not None]


# -- who proposed: the first commit's author, never a later revision's ------------------
# A proposal branch is a line of commits from its recorded base: the one that created it,
# then its revisions. Anyone who can push can put one more commit on it — a "revision"
# under their own name — and the tip's author used to be read as the proposer: Ada added
# one to Bob's proposal and rejected it, and the record said Ada withdrew her own
# proposal, Bob gone from it (the fifth outsider, row 45). So the proposer is read from
# the first commit of the line (its first parents back to the base); a later revision by
# anyone else changes nothing of who proposed it — approve refuses it (`verify`: every
# revision is its proposer's), and a rejection by its author is a reviewer's. A branch
# that is no line from its base has no known proposer: nobody withdraws it.


def first_commit(kb: KB, proposal: Proposal) -> str | None:
    """The commit that created the proposal (its first parents back to its recorded
    base, at most MAX_REVISIONS + 1 commits); None when the branch is no such line."""
    if not proposal.base_commit:
        return None
    commit = proposal.commit
    try:
        for _ in range(MAX_REVISIONS + 1):
            parents = kb.repo.commit_parents(commit)
            if not parents:
                return None
            if parents[0] == proposal.base_commit:
                return commit
            commit = parents[0]
    except VouchError:
        return None
    return None


def origin(kb: KB, proposal: Proposal) -> Proposal:
    """The proposal with its proposer read from its first commit (unchanged when the
    branch is no line from its base, or the tip is that commit)."""
    from dataclasses import replace

    first = first_commit(kb, proposal)
    if first is None or first == proposal.commit:
        return proposal
    found = with_people(kb, replace(proposal, commit=first))
    return replace(
        proposal,
        proposer=found.proposer,
        proposer_email=found.proposer_email,
        operator=found.operator,
    )


def origin_known(kb: KB, proposal: Proposal) -> bool:
    """Whether who proposed it can be told: a proposal made before vouch recorded bases
    (one commit, no base) by its commit's author, else by its first commit."""
    return not proposal.base_commit or first_commit(kb, proposal) is not None


def decision_of(kb: KB, proposal_id: str, commit: str | None) -> dict[str, Any] | None:
    """The decision record for a proposal in `commit`'s tree, or None."""
    from vouch.core import yamlio

    if commit is None:
        return None
    blob = kb.repo.blob_at(commit, kb.rel(decided_path(proposal_id)))
    if blob is None:
        return None
    return yamlio.load_yaml(kb.repo.read_blob(blob).decode(), where=decided_path(proposal_id))


def _readable_decision(kb: KB, proposal_id: str, head: str | None) -> dict[str, Any] | None:
    """The decision record, when it can be read: only to word a refusal."""
    try:
        found = decision_of(kb, proposal_id, head)
    except (VouchError, UnicodeDecodeError):
        return None
    return found if isinstance(found, dict) else None


def refuse_decided(proposal_id: str, decision: dict[str, Any] | None) -> GateRefused:
    verb = (decision or {}).get("decision") or "rejected"
    if verb == "rejected" and (decision or {}).get("withdrawn") is True:
        verb = "withdrawn"
    who = (decision or {}).get("decided_by")
    return GateRefused(
        f"proposal {proposal_id} was already {verb}" + (f" by {who}" if who else ""),
        hint="a decided proposal is never re-opened; propose again to change it",
    )


def branch_patterns(proposal_id: str) -> list[str]:
    """The ref patterns of a proposal's branch: local, then remote-tracking copies."""
    return [PROPOSAL_PREFIX + proposal_id, f"{REMOTE_PREFIX}*/vouch/proposal/{proposal_id}"]


def find(kb: KB, proposal_id: str) -> Proposal:
    """The open proposal: its local branch, else a remote-tracking one (review on a host).

    A proposal that no branch holds any more is either decided (GateRefused, saying how)
    or unknown (NotFound).
    """
    check_proposal_id(proposal_id)
    found = read_proposals(kb, branch_patterns(proposal_id))
    found.sort(key=lambda p: not p.local)  # the local branch wins over origin's copy
    if found:
        return found[0]
    head = kb.repo.resolve("HEAD")
    if kb.repo.resolve(REJECTED_PREFIX + proposal_id):  # who, and whether withdrawn
        raise refuse_decided(proposal_id, _readable_decision(kb, proposal_id, head))
    decision = decision_of(kb, proposal_id, head)
    if decision:
        raise refuse_decided(proposal_id, decision)
    merged = find_merged(kb, proposal_id, head)
    if merged is not None:
        return merged
    for pattern in branch_patterns(proposal_id):
        for (ref,) in kb.repo.for_each_ref(pattern, ["refname"]):
            # someone committed on top of the proposal: its tip is no longer what was proposed
            raise GateRefused(
                f"{ref} has commits on top of proposal {proposal_id}; vouch decides only "
                "the commit it proposed",
                hint="propose the edited content again, then delete this branch "
                f"(git branch -D vouch/proposal/{proposal_id})",
            )
    raise NotFound(
        f"no open proposal {proposal_id}",
        hint="`vouch pending` lists open proposals; `git fetch` brings remote ones",
    )


def find_merged(kb: KB, proposal_id: str, commit: str | None) -> Proposal | None:
    """The proposal commit, when git itself merged it into `commit`'s history (a
    `git merge` or a host's merge button, then the branch deleted); else None."""
    if commit is None:
        return None
    rows = kb.repo.log_records(
        commit, ("%H", "%cI", "%B"), max_count=8, grep=f"Vouch-Proposal: {proposal_id}"
    )
    for parts in rows:
        found = from_record([f"merged/{proposal_id}", *parts]) if len(parts) == 3 else None
        if found is not None and "Vouch-Decision" not in found.trailers:
            return with_people(kb, found)
    return None
