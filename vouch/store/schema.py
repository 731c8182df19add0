"""The knowledge schema version a repository is in, and the writes a newer one refuses.

`.vouch/config.yaml` says which layout and object format the knowledge files follow
(`schema_version`, a whole number; a repository made before the key existed is version
1). This vouch knows `CURRENT`, which the steps of `vouch.migrate.steps` reach from
`BASE` (a test holds the two together; `vouch init` writes CURRENT). A repository
of a newer version was written by a newer vouch: its files may mean what this one cannot
tell, so every write is refused before it starts — every vouch writer takes the clone's
write lock (`vouch.store.state.write_lock`), and that is where `refuse_newer` is called.
Reads go on: they change nothing in the repository (the derived index is a local cache).
An older version is written as it is; `vouch migrate plan` shows the upgrade and
`vouch doctor` says it is behind.
"""

from __future__ import annotations

from pathlib import Path

from vouch.core.config import CONFIG_NAME, parse
from vouch.errors import CorruptFile, SchemaTooNew, SettingsInvalid
from vouch.store.kb import KB

KEY = "schema_version"
BASE = 1  # every repository made before the key existed
CURRENT = 1  # what this vouch writes: raise it with the step that upgrades to it
_current = CURRENT  # a test's own step raises it (`vouch.migrate.steps.registered`)


def current() -> int:
    """The newest version this vouch reads and writes."""
    return _current


def set_current(version: int) -> None:
    """Only for the migration registry (`vouch.migrate.steps.registered`, tests)."""
    global _current
    _current = version


def version_in(text: str | None, where: str) -> int:
    """The version a config.yaml's text declares (BASE without the key or the file);
    SettingsInvalid when the value is not a whole number from 1."""
    if text is None:
        return BASE
    data = parse(text, where=where)
    if KEY not in data:
        return BASE
    value = data[KEY]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SettingsInvalid(
            f"{where}: {KEY} must be a whole number from 1, not {value!r}",
            hint=f"vouch will not guess which format the knowledge is in; put back the "
            f"{KEY} line `git log -p {CONFIG_NAME}` shows, or upgrade vouch if a newer "
            "one wrote it",
        )
    return value


def version_of(vouch_dir: Path) -> int:
    """The version the work tree's `.vouch/config.yaml` declares."""
    path = vouch_dir / CONFIG_NAME
    try:
        text: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptFile(f"cannot read {path}: {exc}") from exc
    return version_in(text, f"{vouch_dir.name}/{CONFIG_NAME}")


def committed_version(kb: KB) -> int | None:
    """The version config.yaml declares in the commit HEAD names; None when there is
    no such commit or file, or it cannot be read (the work tree's copy says why)."""
    repo = kb.repo
    head = repo.peek("HEAD")
    blob = repo.blob_at(head, kb.rel(CONFIG_NAME)) if head else None
    if blob is None:
        return None
    try:
        return version_in(repo.read_blob(blob).decode("utf-8"), "HEAD")
    except (CorruptFile, UnicodeDecodeError):
        return None


def refuse_newer(kb: KB) -> None:
    """SchemaTooNew when the repository's version — the work tree's, or HEAD's when that
    is newer (a version edited down by hand does not lift the refusal) — is newer than
    this vouch knows; nothing was written (the caller has not started)."""
    found = max(version_of(kb.dir), committed_version(kb) or BASE)
    if found > _current:
        raise SchemaTooNew(
            f"this knowledge base is in schema version {found}, and this vouch knows "
            f"versions up to {_current}: a newer vouch wrote it, and writing with this one "
            "could damage what it cannot read; nothing was changed",
            hint="upgrade vouch (e.g. `pip install -U vouch`); reading and searching "
            "still work with this one",
        )
