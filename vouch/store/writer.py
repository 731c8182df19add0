"""Direct commits on the checked-out branch, for changes that are not gated.

Source intake, evidence registration, `vouch init` and lifecycle edits land here. The
commit is built in-process from the branch tip — the new files, plus the audit event
appended to the committed log — and then landed like every vouch write
(`vouch.store.landing`): journal, work tree and index, then one compare-and-swap of the
branch. A kill at any point leaves a state that an ordinary `git commit` cannot lose
and that the next vouch write finishes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vouch.core.progress import Progress, each
from vouch.store import audit
from vouch.store.kb import KB
from vouch.store.landing import fault, land
from vouch.store.recovery import recover

AUDIT_HEAD = "Vouch-Audit-Head"  # trailer: the audit chain's head this commit leaves


def trailers(pairs: Mapping[str, str | None]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in pairs.items() if v)


def segment_seq(kb: KB, commit: str | None, log: bytes) -> int:
    """The sequence number a closed audit segment would get on top of `commit`."""
    if len(log) < audit.SEGMENT_BYTES or commit is None:
        return 1  # nothing will be closed
    tree = kb.repo.blob_at(commit, kb.rel(audit.SEGMENT_DIR))
    return audit.next_seq(row[3] for row in kb.repo.ls_tree(tree)) if tree else 1


def audit_changes(
    kb: KB, tip: str | None, events: list[tuple[str, str, list[str], dict[str, Any]]]
) -> tuple[dict[str, bytes], str]:
    """The audit files (`.vouch/`-relative -> bytes) that append `events` to the log
    committed in `tip`, and the chain's new head hash. Events are always made here, by
    the writer, never taken from a branch."""
    repo = kb.repo
    blob = repo.blob_at(tip, kb.rel(audit.LOG_NAME)) if tip else None
    log = repo.read_blob(blob) if blob else b""
    new_log, segments, made = audit.append_events(log, events, seq=segment_seq(kb, tip, log))
    return {**segments, audit.LOG_NAME: new_log}, str(made[-1]["hash"])


def commit_direct(
    kb: KB,
    files: Mapping[str, bytes | None],
    *,
    subject: str,
    event: str,
    actor: str,
    object_ids: Iterable[str],
    data: dict[str, Any] | None = None,
    extra_trailers: Mapping[str, str | None] | None = None,
    progress: Progress | None = None,
) -> str:
    """Commit `files` (paths relative to `.vouch/`; None deletes) plus one audit event.

    The caller holds the write lock. Returns the new commit id. `progress` hears of the
    blobs stored and the work-tree files written (a bulk add or an import: thousands).
    """
    recover(kb)  # a landing cut short by a crash is finished before anything else
    repo = kb.repo
    branch = repo.head_branch()
    head = repo.peek(branch)
    logs, chain_head = audit_changes(kb, head, [(event, actor, list(object_ids), data or {})])
    payloads: dict[str, bytes | None] = {**files, **logs}
    with repo.store.batch():  # a big commit (an import) is stored as one pack
        changes: dict[str, str | None] = {
            kb.rel(p): (repo.write_blob(b) if b is not None else None)
            for p, b in each(list(payloads.items()), progress, "storing", every=200)
        }
        if head:
            pairs = each(list(changes.items()), progress, "comparing", every=500)
            changes = {p: b for p, b in pairs if repo.blob_at(head, p) != b}
        tree = repo.edit_tree(repo.store.peel_tree(head) if head else None, changes)
    message = (
        f"{subject}\n\n"
        + trailers(
            {
                "Vouch-Event": event,
                "Vouch-Actor": actor,
                **(extra_trailers or {}),
                AUDIT_HEAD: chain_head,
            }
        )
        + "\n"
    )
    commit = repo.write_commit(tree, [head] if head else [], message)
    fault("committed")
    land(kb, branch, head, commit, changes, message=f"vouch: {subject}", progress=progress)
    return commit
