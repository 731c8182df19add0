"""Where a knowledge base is: `--kb`/`VOUCH_KB`, else the nearest `.vouch/` above.

Its own module, importing nothing heavy: the entry point (`vouch.launch`) finds the
knowledge base with it before the CLI is imported.
"""

from __future__ import annotations

import os
from pathlib import Path

from vouch.errors import NoKnowledgeBase

VOUCH_DIR = ".vouch"


def find_root(start: Path | None = None, explicit: str | os.PathLike[str] | None = None) -> Path:
    """The `.vouch/` directory: from `--kb`/`VOUCH_KB`, else walking up from `start`."""
    explicit = explicit or os.environ.get("VOUCH_KB") or None
    if explicit:
        path = Path(explicit).expanduser().resolve()
        for candidate in (path, path / VOUCH_DIR):
            if candidate.name == VOUCH_DIR and (candidate / "config.yaml").is_file():
                return candidate
        raise NoKnowledgeBase(
            f"no vouch knowledge base at {path}",
            hint="run `vouch init` there, or fix --kb/VOUCH_KB",
        )
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / VOUCH_DIR
        if (candidate / "config.yaml").is_file():
            return candidate
    raise NoKnowledgeBase(
        f"no vouch knowledge base in {here} or any parent directory",
        hint="run `vouch init`, or point --kb / VOUCH_KB at one",
    )
