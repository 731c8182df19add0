"""Files under `.vouch/` that git does not track: strays, never knowledge.

Knowledge is what a commit holds — an approval lands as one — so `vouch doctor` judges
the files git tracks (read from the work tree, so an uncommitted hand edit of one is
still seen). A file git does not track (a copy dropped into `.vouch/claims/`, an editor's
leftover, a file a checkout of another branch left behind) entered no commit and went
through no review: it is not judged as knowledge — no "no decision record" error, no
count among the objects — but reported once, as a warning naming the file and what to
do with it: remove it, or propose it for review. Until then the reads that take the
work tree as it is (`vouch list`, `vouch search`) show it, so the warning says so. The
new files of an interrupted write (its journal names them) are not strays: the next
vouch write finishes or undoes it, and doctor's `local` check says so.
"""

from __future__ import annotations

import shlex

from vouch.health import files
from vouch.health.issues import Issue, warn
from vouch.kinds import GATED
from vouch.store import journal
from vouch.store.kb import KB

_OTHERS = {  # how a file of a kind that is not proposed enters: the command that writes it
    "source": "`vouch source add FILE`",
    "evidence": "`vouch evidence add SOURCE LOCATOR`",
    "session": "`vouch session start`",
}


def split(kb: KB) -> tuple[files.View, list[str]]:
    """The work tree's knowledge files git tracks (a view for lint), and the others'
    `.vouch/`-relative paths."""
    everything = files.work_tree(kb)
    start = files.prefix(kb)
    tracked = {p[len(start) :] for p in kb.repo.tracked(kb.rel(".")) if p.startswith(start)}
    kept = {rel: blob for rel, blob in everything.listing.items() if rel in tracked}
    landing = journal.peek(kb)  # an interrupted write's new files: the next write
    writing = {p[len(start) :] for p in landing.changes} if landing else set()  # ends it
    strays = sorted(
        rel
        for rel in everything.listing
        if rel not in tracked and rel not in writing and files.catalog(rel) is not None
    )
    return files.View(kb, kept), strays


def issues(kb: KB, strays: list[str]) -> list[Issue]:
    """One warning per untracked file, with the commands that settle it."""
    start = files.prefix(kb)
    return [_stray(start + rel, str(kb.dir / rel), files.catalog(rel)) for rel in strays]


def _stray(path: str, full: str, entry: files.Entry | None) -> Issue:
    kind = entry.kind if entry is not None else None
    remove = f"remove it (`rm {shlex.quote(full)}`)"
    if kind in GATED:
        settle = f"{remove}, or propose it for review (`vouch propose-{kind}`)"
    elif kind in _OTHERS:
        settle = f"{remove}, or add it through vouch ({_OTHERS[kind]})"
    else:  # a decision record, or a misnamed file: only vouch writes those
        settle = f"{remove}: only vouch's own writes (`vouch approve`, `vouch reject`) make one"
    what = "decision record" if kind == files.DECISION else kind or "file"
    return warn(
        "untracked",
        f"this {what} is not tracked by git, so it is not knowledge: it entered no commit "
        "and no review, and doctor does not judge it as knowledge (`vouch list` and "
        f"`vouch search` show it while it is in the work tree); {settle}",
        id=entry.id if entry is not None else None,
        path=path,
    )
