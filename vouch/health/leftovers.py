"""What a killed or attacked vouch write can leave, for `vouch doctor` to report.

- a landing journal that failed its checks and was set aside, never executed
  (`vouch.store.journal`);
- a landing still unfinished (a write in progress, or killed; the next write finishes it);
- git lock files (`index.lock`, `HEAD.lock`, `refs/**.lock`, `packed-refs.lock`): those a
  dead vouch process left are errors (every git write fails until they go; the next vouch
  write removes them), any other one older than a minute is a warning;
- an approval without its object on the branch: an approve event in the committed audit
  log, or an approved decision record, whose object file the branch does not hold (what
  a commit of half a landing would leave).

Each issue says the command that mends it. Nothing here writes.
"""

from __future__ import annotations

import os
import time
from typing import Any

from vouch.errors import VouchError
from vouch.gate import purged
from vouch.health.issues import Issue, error, warn
from vouch.kinds import KINDS
from vouch.store import audit, gitlocks, journal
from vouch.store.kb import DECIDED_DIR, KB, PROPOSAL_PREFIX

_LOCK_AGE = 60.0  # seconds: a younger lock of no dead vouch is a git command at work


def issues(kb: KB) -> list[Issue]:
    return [*journals(kb), *git_locks(kb), *approvals_without_objects(kb)]


def journals(kb: KB) -> list[Issue]:
    out = [
        error(
            "invalid-journal",
            f"a landing journal was refused and set aside, never executed ({reason}); it "
            f"is kept at {where}. vouch changed nothing because of it: check `git status` "
            f"and `git log -1`, then delete it: rm -f '{where}' '{where}.reason'",
            path=None,
        )
        for where, reason in journal.rejected(kb)
    ]
    out += pending(kb, severity="warn")
    old = kb.dir / "locks" / journal.NAME  # where older versions kept it: never read now
    if os.path.lexists(old) and not kb.repo.tracked(kb.rel(f"locks/{journal.NAME}")):
        out.append(
            warn(
                "old-journal",
                f"{kb.rel('locks/' + journal.NAME)} is a landing journal where an older "
                "vouch kept it (or a file someone put there); vouch no longer reads it. If "
                "an older vouch was killed mid-write, check `git status`; then remove it: "
                f"rm '{old}'",
                path=kb.rel(f"locks/{journal.NAME}"),
            )
        )
    return out


def pending(kb: KB, *, severity: str = "warn") -> list[Issue]:
    """A landing journal waiting for the next write."""
    if not journal.exists(kb):
        return []
    make = error if severity == "error" else warn
    return [
        make(
            "interrupted-landing",
            f"a vouch write is in progress or was interrupted ({journal.path(kb)}); the "
            "next vouch write finishes or undoes it: run `vouch init` (it changes "
            "nothing else)",
        )
    ]


def half_landing(kb: KB) -> list[Issue]:
    """For a commit being made (`lint --staged`, the pre-commit hook): an error when the
    index holds part of an unfinished landing — some of its files as it wrote them,
    others not — so that the commit would take objects without their records or
    records without their objects. All of it (an interrupted approval committed by
    hand) or none of it is fine."""
    found = journal.peek(kb)
    if found is None:
        return []
    staged = kb.repo.index_blobs(found.changes)
    landed = sorted(p for p, b in found.changes.items() if staged.get(p) == b)
    if not landed or len(landed) == len(found.changes):
        return []
    left = sorted(set(found.changes) - set(landed))
    return [
        error(
            "half-landing",
            f"this commit would take part of an interrupted vouch write: {', '.join(landed)} "
            f"but not {', '.join(left)}. Run `vouch init` to finish it (it changes nothing "
            "else), then commit",
        )
    ]


def git_locks(kb: KB) -> list[Issue]:
    stale = gitlocks.stale(kb)
    out = [
        error(
            "stale-git-lock",
            f"{path} was left by vouch process {pid}, which died inside git; every git "
            "write fails until it is removed. The next vouch write removes it (`vouch "
            f"init`), or: rm '{path}'",
        )
        for path, pid in stale
    ]
    left = {path for path, _ in stale}
    now = time.time()
    for path in gitlocks.present(kb):
        if path in left:
            continue
        try:
            age = now - os.lstat(path).st_mtime
        except OSError:
            continue
        if age >= _LOCK_AGE:
            out.append(
                warn(
                    "git-lock",
                    f"{path} has existed for {int(age)} s: a git command holds it, or one "
                    "was killed and left it, and git writes fail meanwhile. If no git "
                    f"command is running: rm '{path}'",
                )
            )
    return out


def approvals_without_objects(kb: KB) -> list[Issue]:
    """Approvals the branch (HEAD) records whose object it does not hold."""
    repo = kb.repo
    head = repo.peek("HEAD")
    if head is None:
        return []
    try:
        files = repo.tree_blobs(head, [kb.rel(".")])
    except VouchError:
        return []
    top = kb.rel(".") + "/"
    log_path = top + audit.LOG_NAME
    logs = sorted(p for p in files if p.startswith(top + audit.SEGMENT_DIR + "/"))
    logs += [log_path] if log_path in files else []
    approved: dict[str, tuple[str, str]] = {}  # proposal id -> (kind, object id)
    for path in logs:
        for line in repo.read_blob(files[path]).split(b"\n"):
            event = audit.parse_line(line) if b"proposal.approve" in line else None
            if not event or event.get("event") != "proposal.approve":
                continue
            found = _approved_object(event)
            if found:
                approved[found[0]] = found[1:]
    decided = {
        p[len(top + DECIDED_DIR) + 1 :].rsplit("/", 1)[-1].removesuffix(".yaml"): p
        for p in files
        if p.startswith(top + DECIDED_DIR + "/") and p.endswith(".yaml")
    }
    out: list[Issue] = []
    gone = {  # approved objects without their file: a purge may have taken them
        top + k.path_for(oid): oid
        for k, oid in ((KINDS.get(kn), oid) for kn, oid in approved.values())
        if k is not None and top + k.path_for(oid) not in files
    }
    took = purged.taken(kb, gone, (repo.read_blob(files[p]) for p in logs), head)
    forgotten = {gone[p] for p in took}
    for pid, (kind_name, object_id) in sorted(approved.items()):
        kind = KINDS.get(kind_name)
        if kind is None:
            continue
        missing = [
            what
            for what, path in (
                ("object", None if object_id in forgotten else top + kind.path_for(object_id)),
                ("decision record", decided.get(pid)),
            )
            if (path is None and what != "object") or (path is not None and path not in files)
        ]
        if missing:
            out.append(_missing(kb, pid, kind_name, object_id, " and ".join(missing), head))
    for pid, path in sorted(decided.items()):
        if pid in approved:
            continue
        record = _record(kb, files[path])
        kind = KINDS.get(str(record.get("kind"))) if record.get("decision") == "approved" else None
        object_id = str(record.get("object_id") or "")
        if (
            kind is not None
            and object_id
            and object_id not in forgotten
            and top + kind.path_for(object_id) not in files
        ):
            out.append(_missing(kb, pid, kind.name, object_id, "object", head))
    return out


def _approved_object(event: dict[str, Any]) -> tuple[str, str, str] | None:
    ids = event.get("object_ids")
    data = event.get("data")
    if not isinstance(ids, list) or len(ids) < 2 or not isinstance(data, dict):
        return None
    pid, object_id, kind = ids[0], ids[1], data.get("kind")
    if not all(isinstance(v, str) for v in (pid, object_id, kind)):
        return None
    return str(pid), str(kind), str(object_id)


def _record(kb: KB, blob: str) -> dict[str, Any]:
    from vouch.core import yamlio

    try:
        data = yamlio.load_yaml(kb.repo.read_blob(blob).decode("utf-8"), where="decided record")
    except (VouchError, UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _missing(kb: KB, pid: str, kind: str, object_id: str, what: str, head: str) -> Issue:
    log = kb.rel(audit.LOG_NAME)
    pending_ref = kb.repo.peek(PROPOSAL_PREFIX + pid)
    again = (
        f"; then approve it again: vouch approve {pid} (it is still pending)" if pending_ref else ""
    )
    return error(
        "approval-without-object",
        f"proposal {pid} is recorded as approved, but the branch ({head[:12]}) holds no "
        f"{what} for {kind} {object_id}: a commit took part of an approval. Find the "
        f"commit that added it (git log --format=%H -S '{pid}' -- {log} "
        f"{kb.rel(DECIDED_DIR)}) and revert it: git revert COMMIT{again}",
        id=pid,
    )
