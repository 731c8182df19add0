"""Commits as provenance: one `git log`, each commit with the role its trailers give it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vouch.gate.records import parse_message
from vouch.store.kb import KB

_FIELDS = ("%H", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%B")


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    date: str
    subject: str
    body: str  # the message without subject and trailers (a proposal's rationale)
    trailers: dict[str, list[str]] = field(default_factory=dict)
    committer: str = ""  # `Name <email>`

    def trailer(self, key: str) -> str:
        return (self.trailers.get(key) or [""])[0]

    @property
    def proposal_id(self) -> str | None:
        return self.trailer("Vouch-Proposal") or None

    @property
    def role(self) -> str:
        """decision, proposal, event (a direct vouch commit) or commit (anything else)."""
        if self.trailer("Vouch-Decision"):
            return "decision"
        if self.trailer("Vouch-Proposal"):
            return "proposal"
        if self.trailer("Vouch-Event"):
            return "event"
        return "merge" if len(self.parents) > 1 else "commit"

    @property
    def actor(self) -> str:
        """Who acted: a proposal's author (never its trailer alone), a decision's
        approver as vouch recorded it, else the vouch actor or git's author."""
        if self.role == "proposal":
            return self.author
        return self.trailer("Vouch-Approver") or self.trailer("Vouch-Actor") or self.author

    @property
    def by(self) -> str:
        """Who acted, in full: `Name <email>`, `agent X <...>, run by Y <...>`, `as <label>`."""
        from vouch.gate.identity import AGENT_DOMAIN, Identity

        if self.role == "proposal":
            operator = self.committer if self.committer != f"{self.author} <{self.email}>" else None
            who = Identity(
                self.author,
                self.email,
                agent=self.email.endswith("@" + AGENT_DOMAIN),
                operator=operator,
                label=self.trailer("Vouch-As") or None,
            )
        elif self.role == "decision":
            who = Identity(
                self.actor,
                self.trailer("Vouch-Approver-Email"),
                agent=self.trailer("Vouch-Approver-Email").endswith("@" + AGENT_DOMAIN),
                label=self.trailer("Vouch-As") or None,
            )
        else:
            return self.actor
        return who.describe()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "commit": self.sha,
            "parents": list(self.parents),
            "role": self.role,
            "date": self.date,
            "author": self.author,
            "actor": self.actor,
            "by": self.by,
            "subject": self.subject,
        }
        extra = {
            "proposal_id": self.proposal_id,
            "decision": self.trailer("Vouch-Decision") or None,
            "event": self.trailer("Vouch-Event") or None,
            "reason": self.trailer("Vouch-Reason") or None,
        }
        out.update({k: v for k, v in extra.items() if v})
        return out


def parse(row: list[str]) -> Commit | None:
    if len(row) < len(_FIELDS):
        return None
    sha, parents, name, email, date, cname, cemail, message = row[: len(_FIELDS)]
    subject, body, trailers = parse_message(message)
    return Commit(
        sha,
        tuple(parents.split()),
        name,
        email,
        date,
        subject,
        body,
        trailers,
        f"{cname} <{cemail}>",
    )


def read_log(
    kb: KB, rev: str, paths: Iterable[str] = (), *, limit: int | None = None
) -> list[Commit]:
    """Commits of `rev`'s history that changed `paths` (repository paths), newest first."""
    rows = kb.repo.log_records(rev, _FIELDS, max_count=limit, paths=paths)
    return [c for c in (parse(r) for r in rows) if c is not None]
