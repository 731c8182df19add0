"""`vouch doctor`: agent hosts whose vouch server no longer starts.

`vouch install-agent` writes the absolute path of the vouch that ran it into the host's
configuration (`vouch.install.hosts.launcher`). A virtual environment deleted or moved,
a Python upgraded, and the host fails to start the server, often silently: the agent
simply has no vouch tools. Each entry is checked here without running anything: an
absolute command must be an executable file; a bare name (an older install wrote
`vouch`) must be on this PATH — the host's may differ, which is why an absolute path is
what install-agent writes now. The fix is named: install again.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from vouch.health.issues import Issue, warn
from vouch.install import hosts
from vouch.store.kb import KB


def check(kb: KB) -> tuple[list[Issue], list[dict[str, Any]]]:
    """(a warning per host entry whose command is gone, every entry found)."""
    issues: list[Issue] = []
    found: list[dict[str, Any]] = []
    for entry in hosts.installed(kb.root):
        problem = missing(entry.command)
        found.append(
            {"host": entry.host, "path": entry.path, "command": entry.command, "ok": not problem}
        )
        if problem:
            issues.append(
                warn(
                    "agent-host-stale",
                    f"the {entry.host} MCP server runs {entry.command!r}, "
                    f"{problem}; run `vouch install-agent {entry.host}` here to point it at "
                    "this vouch",
                    path=entry.path,
                )
            )
    return issues, found


def missing(command: str) -> str | None:
    """Why `command` would not start, or None."""
    if os.path.isabs(command):
        path = Path(command)
        if not path.is_file():
            return "which no longer exists"
        if not os.access(path, os.X_OK):
            return "which is not executable"
        return None
    if shutil.which(command) is None:
        return "which is not on this PATH (nor, perhaps, on the host's)"
    return None
