"""Every change of the gate's own settings in a history, judged by what came before it.

A commit that changes the review settings (`review.*` in the committed configuration) or
the allowed-signers file they name, where its parent requires signed decisions, must carry
a good signature — judged by the parent's allowed signers — by an approver the parent
lists. Otherwise one plain commit could switch signing off, or trust its own key, and every
later commit would be judged by what it wrote. A merge is judged only where it changes the
settings itself (differs from every parent), so a plain merge of a signed change passes.
`audit --verify` and `doctor` run this on the whole history; `lint --since` judges a range
by its base (`vouch/health/settings_drift.py`), which is at least as strict.
"""

from __future__ import annotations

from typing import Any

from vouch.core.config import CONFIG_NAME, Config
from vouch.gate import committed, signers, trusted_keys
from vouch.gate.auditproof import Finding
from vouch.git import trail
from vouch.store.kb import KB


def check(kb: KB, head: str) -> list[Finding]:
    config = kb.rel(CONFIG_NAME)
    reader = _Settings(kb)
    names = {reader.signers_name(t.sha) for t in trail.touching(kb.repo, head, [config])}
    names.discard("")
    paths = [config, *sorted(kb.rel(n) for n in names if not trusted_keys.path_problem(n))]
    judge = trusted_keys.Judge(kb)
    wanted: list[tuple[str, list[str], str]] = []  # commit, approvers, its parent
    for touch in trail.touching(kb.repo, head, [f":(literal){p}" for p in paths]):
        if not touch.parents:
            continue
        mine = reader.gate(touch.sha)
        for parent in _changed_from(kb, reader, touch.parents, mine):
            settings = reader.config(parent)
            if settings.get("review.require_signed_decisions") is not True:
                continue
            listed = settings.get("review.approvers") or []
            approvers = [str(a) for a in listed] if isinstance(listed, list) else []
            wanted.append((touch.sha, approvers, parent))
            break
    if not wanted:
        return []
    found = signers.verified(
        kb, [sha for sha, _, _ in wanted], judged_by=lambda c: judge.at(_parent_of(wanted, c))
    )
    out = []
    for sha, approvers, _ in wanted:
        sig = found.get(sha)
        name = sig.signer if sig is not None and sig.good else ""
        signer = signers.identities(name) if name else set()
        allowed = {x for a in approvers for x in signers.identities(a)}
        if signer and (not approvers or signer & allowed):
            continue
        why = f"a signature by {name!r}, who is not listed" if signer else "no good signature"
        out.append(
            Finding(
                "review-settings",
                f"commit {sha[:12]} changes the review settings or the allowed signers "
                f"with {why}, while the commit before it requires signed decisions by "
                f"an approver it lists: an allowed approver makes the change in a signed "
                "commit (judged by the allowed signers before it)",
                sha,
            )
        )
    return out


def changers(kb: KB, commits: list[str], paths: list[str]) -> list[str]:
    """Of `commits`, those that change the gate on their own (`_changed_from`), given
    the repository `paths` they may change it through (the configuration and the
    allowed-signers files)."""
    reader = _Settings(kb)
    out = []
    for sha in commits:
        parents = kb.repo.commit_parents(sha)
        if parents and _changed_from(kb, reader, parents, reader.gate(sha)):
            out.append(sha)
    return out


def _changed_from(kb: KB, reader: _Settings, parents: list[str], mine: Any) -> list[str]:
    """The parents whose gate this commit changes on its own. A merge that takes one
    side's settings changes nothing of its own only where that side grew from the other
    (its change was judged on the way, commit by commit); a side that forked before the
    other's settings — and a merge that keeps it over them — changes them here."""
    same = [p for p in parents if reader.gate(p) == mine]
    return [
        q
        for q in parents
        if reader.gate(q) != mine and not any(kb.repo.is_ancestor(q, p) for p in same)
    ]


def _parent_of(wanted: list[tuple[str, list[str], str]], commit: str) -> str:
    return next(parent for sha, _, parent in wanted if sha == commit)


class _Settings:
    """The configuration and gate settings at each commit, cached by blob."""

    def __init__(self, kb: KB):
        self.kb = kb
        self._settings = committed.Settings(kb)

    def config(self, commit: str) -> Config:
        return self._settings.at(commit)

    def signers_name(self, commit: str) -> str:
        return trusted_keys.setting(self.config(commit))

    def gate(self, commit: str) -> tuple[Any, str | None]:
        """What the gate is at `commit`: its review settings and the allowed-signers blob."""
        settings = self.config(commit)
        name = trusted_keys.setting(settings)
        blob = None
        if name and not trusted_keys.path_problem(name):
            blob = committed.blob_at(self.kb, commit, self.kb.rel(name))
        return repr(settings.get("review")), blob
