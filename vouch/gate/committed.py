"""The configuration a commit holds: what the gate obeys at that point of history.

`settings_at` is the strict read a decision makes (a review section that cannot be
obeyed as written is refused, `SettingsInvalid`). `Settings` reads many commits of a
history once per configuration blob and fails closed instead of raising: settings
nobody can read ask for signatures from an approver no identity matches, and name an
allowed-signers file that cannot exist — nothing they judge passes.
"""

from __future__ import annotations

from vouch.core.config import CONFIG_NAME, Config
from vouch.errors import CorruptFile, VouchError
from vouch.store.kb import KB

UNREADABLE_APPROVER = "(the review settings committed here cannot be read)"
UNREADABLE_SIGNERS = "\x00unreadable configuration"
FAIL_CLOSED = Config(
    {
        "review": {
            "require_signed_decisions": True,
            "approvers": [UNREADABLE_APPROVER],
            "allowed_signers": UNREADABLE_SIGNERS,
        }
    }
)


def blob_at(kb: KB, commit: str, path: str) -> str | None:
    """The blob at repository path `path` in `commit` (None: absent, or not a file)."""
    try:
        return kb.repo.blob_at(commit, path)
    except VouchError:
        return None


def settings_at(kb: KB, commit: str) -> Config:
    """The configuration committed in `commit`, read strictly (`gate=True`)."""
    blob = kb.repo.blob_at(commit, kb.rel(CONFIG_NAME))
    text = kb.repo.read_blob(blob).decode("utf-8", "replace") if blob else None
    return Config.from_text(text, f"{commit[:12]}:{kb.rel(CONFIG_NAME)}", gate=True)


class Settings:
    """The configuration at each commit of a history, read once per blob; settings
    nobody can read are `FAIL_CLOSED`."""

    def __init__(self, kb: KB):
        self.kb = kb
        self._by_blob: dict[str | None, Config] = {}

    def blob(self, commit: str) -> str | None:
        return blob_at(self.kb, commit, self.kb.rel(CONFIG_NAME)) if commit else None

    def at(self, commit: str) -> Config:
        blob = self.blob(commit)
        if blob not in self._by_blob:
            text = self.kb.repo.read_blob(blob).decode("utf-8", "replace") if blob else None
            try:
                where = f"{commit[:12]}:{self.kb.rel(CONFIG_NAME)}"
                self._by_blob[blob] = Config.from_text(text, where, gate=True)
            except CorruptFile:
                self._by_blob[blob] = FAIL_CLOSED
        return self._by_blob[blob]
