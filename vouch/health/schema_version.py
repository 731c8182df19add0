"""`vouch doctor`'s word on the knowledge schema version (`vouch.store.schema`): behind
this vouch's (a warning: `vouch migrate plan` shows the upgrade), or newer (an error:
this vouch refuses to write until it is upgraded)."""

from __future__ import annotations

from vouch.core.config import CONFIG_NAME
from vouch.errors import CorruptFile
from vouch.health.issues import Issue, error, warn
from vouch.store import schema
from vouch.store.kb import KB


def issues(kb: KB) -> list[Issue]:
    where = kb.rel(CONFIG_NAME)
    try:
        found = schema.version_of(kb.dir)
    except CorruptFile:
        return []  # config_drift names an unreadable file or a wrong value already
    now = schema.current()
    if found < now:
        return [
            warn(
                "schema-behind",
                f"the knowledge is in schema version {found}, and this vouch writes "
                f"version {now}: run `vouch migrate plan` to see the upgrade, and "
                "`vouch migrate apply` to make it (one commit)",
                id=schema.KEY,
                path=where,
            )
        ]
    if found > now:
        return [
            error(
                "schema-newer",
                f"the knowledge is in schema version {found}, newer than this vouch's "
                f"{now}: it refuses every write here; upgrade vouch",
                id=schema.KEY,
                path=where,
            )
        ]
    return []
