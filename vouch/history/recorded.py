"""The version of a gated object `vouch why` vouches for, and what differs from it.

`why` names who approved an object; what it shows under that name must be what they
approved. The work-tree file may hold uncommitted edits, and a commit made by hand
(`git commit --no-verify`) may have changed the file after its decision: either one,
shown under "approved by Rita", put words in a reviewer's mouth (fourth outsider, row
37). So `why` shows the object as vouch last recorded it — the newest decision,
proposal or direct vouch write (a lifecycle edit) in the file's history, which is what
HEAD holds unless a plain commit changed it since — and says what differs:
`uncommitted` when the work tree's bytes are not HEAD's, and `edited_after_approval`
listing the plain commits since, with the committed title when it is not the one shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vouch.history.commits import Commit
from vouch.history.snapshot import Snapshot
from vouch.kinds import KINDS, Obj
from vouch.store.kb import KB

_VOUCH_ROLES = ("decision", "proposal", "event")


def recorded(
    kb: KB,
    kind: str,
    object_id: str,
    work: Obj,
    commits: list[Commit],
    title: Callable[[str, Obj], str],
) -> tuple[Obj, dict[str, Any]]:
    """(the object to show, notes on what differs from it): `uncommitted` (bool) and
    `edited_after_approval` (the plain commits since vouch's last, newest first, and
    `committed_title`, HEAD's title, when it is not the shown one)."""
    rel = KINDS[kind].path_for(object_id)
    head = Snapshot(kb, "HEAD")
    committed_bytes = head.read(rel) if kb.repo.peek("HEAD") else None
    notes: dict[str, Any] = {"uncommitted": Snapshot(kb).read(rel) != committed_bytes}
    committed = head.object(kind, object_id) if committed_bytes is not None else None
    shown = committed or work
    last = next((c for c in commits if c.role in _VOUCH_ROLES), None)
    if last is None:
        return shown, notes
    since = commits[: commits.index(last)]  # newest first: none of them vouch's
    if not since:
        return shown, notes
    notes["edited_after_approval"] = [
        {"commit": c.sha, "author": c.author, "date": c.date, "subject": c.subject} for c in since
    ]
    as_recorded = Snapshot(kb, last.sha).object(kind, object_id)
    if as_recorded is not None:
        shown = as_recorded
        if committed is not None and title(kind, committed) != title(kind, shown):
            notes["committed_title"] = title(kind, committed)
    return shown, notes
