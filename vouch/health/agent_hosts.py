"""`vouch doctor`: agent hosts whose vouch server no longer starts.

`vouch install-agent` writes the absolute path of the vouch that ran it into the host's
configuration (`vouch.install.hosts.launcher`). A virtual environment deleted or moved,
a Python upgraded, and the host fails to start the server, often silently: the agent
simply has no vouch tools. Each entry is checked here without running anything: an
absolute command must be an executable file; a bare name (an older install wrote
`vouch`) must be on this PATH — the host's may differ, which is why an absolute path is
what install-agent writes now. The fix is named: install again.

A file a repository commits may be hostile (a link to `/dev/zero`, 200,000 nested
brackets, a 50 MB command): it is read within bounds (`vouch.install.hostfiles`), a
refused one is a warning of its own (`agent-host-unreadable`), and a command is quoted
cut short.
"""

from __future__ import annotations

import os
import shutil
import stat
from typing import Any

from vouch.health.issues import Issue, warn
from vouch.install import hosts
from vouch.install.hostfiles import cut
from vouch.store.kb import KB


def check(kb: KB) -> tuple[list[Issue], list[dict[str, Any]]]:
    """(a warning per host entry whose command is gone, every entry found)."""
    issues: list[Issue] = []
    found: list[dict[str, Any]] = []
    entries, refused = hosts.scan(kb.root)
    for exc in refused:
        issues.append(
            warn(
                "agent-host-unreadable",
                f"{exc.rel} {exc.detail}, so doctor did not check it (nor may the agent host "
                "start from it)",
                path=exc.rel,
            )
        )
    for entry in entries:
        problem = missing(entry.command)
        command = cut(entry.command)
        found.append(
            {"host": entry.host, "path": entry.path, "command": command, "ok": not problem}
        )
        if problem:
            issues.append(
                warn(
                    "agent-host-stale",
                    f"the {entry.host} MCP server runs {command!r}, "
                    f"{problem}; run `vouch install-agent {entry.host}` here to point it at "
                    "this vouch",
                    path=entry.path,
                )
            )
    return issues, found


def missing(command: str) -> str | None:
    """Why `command` would not start, or None."""
    if os.path.isabs(command):
        try:
            if not stat.S_ISREG(os.stat(command).st_mode):
                return "which no longer exists"
        except (OSError, ValueError):  # gone, or no file's name (too long, a NUL)
            return "which no longer exists"
        if not os.access(command, os.X_OK):
            return "which is not executable"
        return None
    if shutil.which(command) is None:
        return "which is not on this PATH (nor, perhaps, on the host's)"
    return None
