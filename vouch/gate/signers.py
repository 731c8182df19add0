"""Who may sign a vouch write, and the signatures this clone has already verified.

With `review.require_signed_decisions` committed, a commit that decides or changes
approved knowledge carries a good signature (`git verify-commit`: GPG, or SSH with
gpg.ssh.allowedSignersFile) by an allowed approver (`review.approvers`), who is the actor
its audit events name. Identities are compared as strings after Unicode normalisation,
removal of format characters and case folding; `Name <email>` also matches its name or
its email alone. Good verdicts are remembered in the clone's git directory with the
allowed signers file they were judged under, so a long signed history is verified once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from vouch.core.config import Config
from vouch.gate import committed, trusted_keys
from vouch.gate.identity import fold, forms
from vouch.gate.trusted_keys import Trust
from vouch.git.history import Signature
from vouch.store.kb import KB

SIGNED = "audit-signed.txt"  # good signatures, with the allowed signers they were judged by


def same(a: object, b: object) -> bool:
    """Two identities as strings, after Unicode normalisation and case folding."""
    return fold(str(a or "")) == fold(str(b or "")) != ""


def identities(value: str) -> set[str]:
    """A name, an email, or `Name <email>`, as the forms it may be listed or signed as."""
    return forms(value)


def committed_policy(kb: KB) -> Callable[[str], tuple[bool, list[str]]]:
    """commit -> (signatures required, allowed approvers), from the configuration
    committed in that commit (the parent of the commit being judged); cached by blob."""
    settings = committed.Settings(kb)  # unreadable settings fail closed
    return lambda commit: fixed_policy(settings.at(commit))


def fixed_policy(settings: Config) -> tuple[bool, list[str]]:
    listed = settings.get("review.approvers") or []
    approvers = [str(a) for a in listed] if isinstance(listed, list) else []
    return settings.get("review.require_signed_decisions") is True, approvers


def verified(
    kb: KB, commits: list[str], judged_by: Callable[[str], Trust] | None = None
) -> dict[str, Signature]:
    """`git verify-commit` of each commit under the allowed signers its parent committed
    (`review.allowed_signers`, else the clone's git configuration), or under
    `judged_by(commit)` (`lint --since`: the base's for the whole range). Good verdicts are
    remembered in the clone's git directory with what they were judged by (a changed or
    revoked key verifies everything again)."""
    from vouch.git.history import signatures

    if judged_by is None:
        judge = trusted_keys.Judge(kb)

        def judged_by(commit: str) -> Trust:
            parents = kb.repo.commit_parents(commit)
            return judge.at(parents[0] if parents else "")

    groups: dict[Trust, list[str]] = {}
    for c in dict.fromkeys(commits):
        groups.setdefault(judged_by(c), []).append(c)
    path = kb.state_dir / SIGNED
    known: dict[tuple[str, str], str] = {}
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for line in path.read_text(encoding="utf-8").splitlines():
            sha, _, rest = line.partition(" ")
            fingerprint, _, signer = rest.partition(" ")
            known[(sha, fingerprint)] = signer
    found: dict[str, Signature] = {}
    remember: list[str] = []
    for trust, group in groups.items():
        mark = trust.fingerprint
        if mark is not None:
            found.update(
                {c: Signature("G", known[(c, mark)], "") for c in group if (c, mark) in known}
            )
        fresh = signatures(kb.repo, [c for c in group if c not in found], trust.file)
        found.update(fresh)
        if mark is not None:
            remember += [
                f"{c} {mark} {s.signer}\n"
                for c, s in fresh.items()
                if s.good and "\n" not in s.signer
            ]
    if remember:
        with contextlib.suppress(OSError):
            kb.state_dir.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as fh:
                fh.write("".join(remember))
    return found
