"""Whose signatures count: the allowed signers a commit's base committed, never its own.

`review.allowed_signers` in the committed configuration names a file inside the
knowledge folder in ssh-keygen's allowed-signers format (the format of git's
`gpg.ssh.allowedSignersFile`). A commit is judged by that file as its parent committed it
(`lint --since` judges a whole range by its base's), so a branch cannot add the key it
signs with: a change to the file is a change of the review settings, made in a commit an
approver signs. Git verifies with a copy of the committed blob kept in the clone's git
directory (`.git/vouch/allowed-signers/<blob>`), given for that one check.

Without the setting, git's own configuration of the checking clone decides
(`gpg.ssh.allowedSignersFile`; GPG: its keyring) — sound only when that names a file
outside the work tree; `doctor` says when it does not.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vouch.core.config import Config
from vouch.core.fsio import write_atomic
from vouch.gate import committed
from vouch.store.kb import KB

SETTING = "review.allowed_signers"
MAX_BYTES = 1 << 20  # an allowed-signers file past this is refused (nothing verifies)
_FOLDER = "allowed-signers"
UNREADABLE = committed.UNREADABLE_SIGNERS


@dataclass(frozen=True)
class Trust:
    """What a signature is judged by: `file` for git (None: git's own configuration),
    `fingerprint` what verdicts under it are remembered by (None: not remembered),
    `problem` why the committed setting cannot be used (then nothing verifies)."""

    file: Path | None
    fingerprint: str | None
    problem: str = ""


def setting(settings: Config) -> str:
    """The allowed-signers path the settings name, normalised (`./x` is `x`: one file
    has one name, or a change to it could pass as a change to another)."""
    value = settings.get(SETTING)
    if not isinstance(value, str) or not value.strip():
        return ""
    return posixpath.normpath(value.strip())


def path_problem(name: str) -> str:
    """Why `name` cannot be the allowed-signers file ("" when it can)."""
    parts = PurePosixPath(name).parts
    if name == UNREADABLE:
        return "the committed review settings cannot be read"
    if "\\" in name or any(ord(ch) < 32 for ch in name):
        return f"{SETTING} {name!r} holds a backslash or a control character"
    if not parts or PurePosixPath(name).is_absolute() or ".." in parts or parts[0] == ".git":
        return f"{SETTING} {name!r} is not a path inside the knowledge folder"
    return ""


class Judge:
    """The trust each commit is judged under, read from committed configuration and
    cached by blob: `at(commit)` is what `commit` committed (a commit is judged by its
    parent's: pass the parent)."""

    def __init__(self, kb: KB):
        self.kb = kb
        self._settings = committed.Settings(kb)  # unreadable: a name nothing matches
        self._by_blob: dict[tuple[str, str | None], Trust] = {}

    def at(self, commit: str) -> Trust:
        kb = self.kb
        name = setting(self._settings.at(commit)) if commit else ""
        if not name:
            return _clone_trust(kb)
        problem = path_problem(name)
        blob = None if problem else committed.blob_at(kb, commit, kb.rel(name))
        key = (name, blob)
        if key not in self._by_blob:
            self._by_blob[key] = _committed(kb, name, blob, problem)
        return self._by_blob[key]


def at(kb: KB, commit: str) -> Trust:
    """The trust `commit` committed (one lookup; many commits: `Judge`)."""
    return Judge(kb).at(commit)


def _committed(kb: KB, name: str, blob: str | None, problem: str) -> Trust:
    where = kb.rel(name) if not problem else name
    data = b""
    if not problem and blob is None:
        problem = f"{SETTING} names {where}, which this commit does not hold"
    if not problem and blob is not None:
        data = kb.repo.read_blob(blob)
        if len(data) > MAX_BYTES:
            problem, data = f"{where} is larger than {MAX_BYTES} bytes", b""
    digest = hashlib.sha256(b"committed\0" + data).hexdigest()[:32]
    path = kb.state_dir / _FOLDER / digest
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    return Trust(path, None if problem else f"committed:{digest}", problem)


def _clone_trust(kb: KB) -> Trust:
    from vouch.git import trail

    return Trust(None, trail.trust_fingerprint(kb.repo))
