"""`vouch migrate apply`: upgrade the committed knowledge to this vouch's schema version
in one audited commit on the checked-out branch — a person's decision, like an approval.

Refused, with nothing written, when `.vouch/` has uncommitted or untracked changes (the
commit must be exactly the plan, and `git revert` of it exactly the way back) and when
an open proposal changes files in a folder a step rewrites (approving it afterwards
would bring the old format back, or conflict). The commit is landed like every vouch
write (`vouch.store.writer`: journal first, then the files, then the branch), so a kill
at any line leaves the old version or the new one, never half of each; the next vouch
write finishes it. Rolling back is `git revert` of that commit: the old version reads
again, and this vouch offers the same upgrade again.
"""

from __future__ import annotations

from typing import Any

from vouch.errors import Conflict, GateRefused
from vouch.migrate.plan import plan_at
from vouch.store.kb import KB

EVENT = "kb.migrate"
TRAILER = "Vouch-Migrate"  # "<from> -> <to>"


def apply(kb: KB, actor: str) -> dict[str, Any]:
    from vouch.store import writer
    from vouch.store.recovery import gate_lock

    with gate_lock(kb):  # refuses a newer version (`vouch.store.schema`) and recovers
        _refuse_dirty(kb)
        head = kb.repo.peek("HEAD")
        p = plan_at(kb, head)
        result: dict[str, Any] = {**p.to_json(), "applied": False, "commit": None}
        if not p.steps:
            return result  # already current: no commit, no event
        _refuse_open_proposals(kb, p.touches)
        span = f"{p.version} -> {p.target}"
        result["commit"] = writer.commit_direct(
            kb,
            p.changes,
            subject=f"vouch: migrate the knowledge schema {span.replace('->', '→')}",
            event=EVENT,
            actor=actor,
            object_ids=[],
            data={
                "from": p.version,
                "to": p.target,
                "steps": [s["name"] for s in p.steps],
                "files": len(p.changes),
            },
            extra_trailers={TRAILER: span},
        )
        result["applied"] = True
    return result


def _refuse_dirty(kb: KB) -> None:
    dirty = kb.repo.worktree_changes([kb.rel(".")])
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" (and {len(dirty) - 5} more)" if len(dirty) > 5 else "")
        raise Conflict(
            f"{kb.rel('.')}/ has uncommitted or untracked changes ({shown}): a migration "
            "is one commit of exactly its plan, so that `git revert` undoes exactly it",
            hint="commit, stash or remove them (`git status .vouch`), then run "
            "`vouch migrate apply` again; nothing was changed",
        )


def _refuse_open_proposals(kb: KB, touches: tuple[str, ...]) -> None:
    from vouch.gate.pending import open_proposals
    from vouch.git.history import merge_base

    folders = tuple(kb.rel(t.rstrip("/")) + "/" for t in touches)
    repo = kb.repo
    head = repo.peek("HEAD")
    caught = []
    for proposal in open_proposals(kb):
        # what the branch changed since it left HEAD's history (its trailers may lie)
        fork = merge_base(repo, head, proposal.commit) if head else None
        base = repo.store.peel_tree(fork) if fork else None
        after = repo.store.peel_tree(proposal.commit)
        changed = repo.tree_changes(base, after) if after else {}
        if any(path.startswith(folders) for path in changed):
            caught.append(proposal.id)
    if caught:
        raise GateRefused(
            f"open proposal(s) {', '.join(caught[:5])}"
            + (f" (and {len(caught) - 5} more)" if len(caught) > 5 else "")
            + f" change files in {', '.join(touches)}, which the migration rewrites: "
            "approved afterwards, they would bring the old format back",
            hint="approve or reject them first (`vouch pending`), then run `vouch migrate "
            "apply`; nothing was changed",
        )
