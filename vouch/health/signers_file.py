"""Whether signatures here are judged by something a branch cannot change.

With `review.require_signed_decisions`, the allowed signers decide who may approve. The
committed `review.allowed_signers` (judged by each commit's parent) is what a pull request
cannot rewrite; without it, git uses the checking clone's `gpg.ssh.allowedSignersFile`,
and when that names a file of the work tree, the branch being checked chooses whom to
trust. `doctor` reports both: a setting that names no usable file (an error: nothing
verifies) and a clone trusting its own work tree (a warning, with the setting to use).
"""

from __future__ import annotations

from pathlib import Path

from vouch.core.config import Config
from vouch.gate import trusted_keys
from vouch.health.issues import Issue, error, warn
from vouch.store.kb import KB


def issues(kb: KB, settings: Config) -> list[Issue]:
    name = trusted_keys.setting(settings)
    if name:
        problem = trusted_keys.path_problem(name)
        if not problem:
            head = kb.repo.peek("HEAD")
            trust = trusted_keys.at(kb, head) if head else None
            problem = trust.problem if trust is not None else ""
        if problem:
            return [
                error(
                    "review-signers",
                    f"{problem}: no signature verifies; commit the allowed signers "
                    "file (ssh-keygen's allowed-signers format) at the path the setting names",
                    id=trusted_keys.SETTING,
                )
            ]
        return []
    if settings.get("review.require_signed_decisions") is not True:
        return []
    inside = _clone_file_inside(kb)
    if inside is None:
        return []
    return [
        warn(
            "review-signers",
            f"this clone verifies signatures with {inside}, a file of the work tree: a "
            "branch that changes it chooses whom to trust. Commit it and name it in "
            f"{trusted_keys.SETTING} (judged by each commit's base), or point "
            "gpg.ssh.allowedSignersFile outside the repository",
            id=trusted_keys.SETTING,
        )
    ]


def _clone_file_inside(kb: KB) -> str | None:
    from vouch.git.command import config_value

    where = (config_value(kb.root, "gpg.ssh.allowedSignersFile") or "").strip()
    if not where:
        return None
    path = Path(where).expanduser()
    full = (path if path.is_absolute() else kb.root / path).resolve()
    try:
        rel = full.relative_to(kb.root.resolve())
    except ValueError:
        return None
    return None if rel.parts and rel.parts[0] == ".git" else rel.as_posix()
