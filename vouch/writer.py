"""Direct commits on the checked-out branch, for changes that are not gated.

Source intake and lifecycle edits land here. The steps are ordered so that a crash at
any point leaves either the old state or the new one:

1. write the files into the work tree (each atomically) and append the audit event;
2. hash the blobs and build the new tree from HEAD's tree with plumbing — only the trees
   on the changed paths are rewritten, and the user's index is never used;
3. create the commit and move the branch with a compare-and-swap (the commit point);
4. record the same blobs in the user's index, so `git status` stays clean for them.

A crash before 3 leaves files that the next run of the same command commits (the paths
are content-addressed); nothing half-written is ever committed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vouch import audit, fsio
from vouch.errors import Conflict
from vouch.kb import KB


def trailers(pairs: Mapping[str, str | None]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in pairs.items() if v)


def dirty_paths(kb: KB, repo_paths: Iterable[str]) -> list[str]:
    """Paths (repository-relative) with uncommitted changes to a file HEAD tracks."""
    paths = list(repo_paths)
    if not paths:
        return []
    out = kb.repo.git("status", "--porcelain=v1", "-z", "--untracked-files=no", "--", *paths)
    return [entry[3:] for entry in out.split("\0") if len(entry) > 3]


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
    check_dirty: bool = True,
) -> str:
    """Commit `files` (paths relative to `.vouch/`; None deletes) plus one audit event.

    The caller holds the write lock. Returns the new commit id.
    """
    from vouch.gate.landing import recover  # lazy: the gate imports the core, not back

    recover(kb)  # a gate landing cut short by a crash is finished before anything else
    repo = kb.repo
    branch = repo.head_branch()
    head = repo.resolve("HEAD")
    log_rel = kb.rel(audit.LOG_NAME)
    # one `git status` for the files and the audit log this commit will include
    dirty = dirty_paths(kb, [*(kb.rel(p) for p in files if check_dirty), log_rel])
    clobbered = [p for p in dirty if p != log_rel]
    if clobbered:
        raise Conflict(
            "uncommitted changes to " + ", ".join(clobbered) + " would be overwritten",
            hint="commit or stash them, then run the command again",
        )
    if head and log_rel in dirty:
        blob = repo.blob_at(head, log_rel)
        committed = repo.read_blob(blob) if blob else b""
        log = kb.dir / audit.LOG_NAME
        current = log.read_bytes() if log.exists() else b""
        if audit.foreign_edit(current, committed):
            raise Conflict(f"uncommitted changes to {log_rel} would be committed with this "
                           "change and break the audit chain",
                           hint="restore it (git checkout -- FILE) or commit it yourself, "
                                "then run the command again")
    for rel, payload in files.items():
        path = kb.dir / rel
        if payload is None:
            path.unlink(missing_ok=True)
        else:
            fsio.write_atomic(path, payload)
    record = audit.next_event(kb.dir, event, actor, object_ids, data)
    log_paths = audit.append_worktree(kb.dir, record)  # may close a segment: cost stays flat

    written = [p for p, payload in files.items() if payload is not None]
    all_paths = [*written, *log_paths]
    blobs = repo.hash_files([kb.dir / p for p in all_paths])
    changes: dict[str, str | None] = {kb.rel(p): b for p, b in zip(all_paths, blobs, strict=True)}
    changes.update({kb.rel(p): None for p, payload in files.items() if payload is None})

    base_tree = repo.resolve_tree("HEAD") if head else None
    tree = repo.edit_tree(base_tree, changes)
    message = f"{subject}\n\n" + trailers(
        {"Vouch-Event": event, "Vouch-Actor": actor, **(extra_trailers or {})}
    ) + "\n"
    commit = repo.commit_tree(tree, [head] if head else [], message, repo.identity())
    repo.update_ref(branch, commit, head, message=f"vouch: {subject}")
    repo.stage_entries(changes)
    return commit
