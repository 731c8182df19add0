"""`vouch forget ID --purge-history --confirm ID`: the rewrite, done.

In order, under the write lock, each step recorded in a journal (`forget.json` in the
clone's state folder) before it starts:

1. the audit event `history.purge` is committed on the current branch (who, when, which
   ids, how many commits the plan rewrites; never the bytes): the audit check reads it
   to know that these objects' files were purged from the commits that approved them;
2. fast-export | filter | fast-import writes the new history beside the old one
   (`vouch.git.purge.rewrite`): nothing a user sees moves;
3. every rewritten ref moves in one `update-ref` transaction, and the work tree
   follows with a two-tree `read-tree`;
4. reflogs expire and `gc --prune=now` drops every unreachable object;
5. the warm process stops, the search index and the search log go, the index is built
   again from the new HEAD.

A kill before 3 leaves the old history (the staging refs are dropped by the next run);
a kill after it leaves the new one. Either way the journal stays, `vouch forget` shows
the purge as interrupted, and the same command with the same confirmation finishes it
(each step is idempotent: a history already rewritten rewrites to itself).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from typing import Any

from vouch.core import fsio
from vouch.core.lock import write_lock
from vouch.errors import GateRefused, UsageError
from vouch.forget import messages
from vouch.forget.plan import JOURNAL, PURGED, Plan, make
from vouch.gate.direct_writes import PURGE
from vouch.git import purge
from vouch.store.kb import KB
from vouch.store.landing import fault

EVENT = PURGE


def perform(kb: KB, ids: list[str], tokens: list[str], confirm: str, actor: str) -> dict[str, Any]:
    """Purge the objects `ids` (and every literal of `tokens`) from this clone's
    history; refused, with nothing written, unless `confirm` repeats what the plan asks
    and nothing blocks it."""
    from vouch.store import state

    with write_lock(state.shared(kb), kb.config.number("lock.timeout_seconds", 30)):
        plan = make(kb, ids, tokens)
        if confirm.strip() != plan.confirm:
            raise UsageError(
                f"--confirm {confirm!r} does not match: this purge asks for {plan.confirm!r}",
                hint=f"run `vouch forget {' '.join(plan.ids)} --purge-history` to read the "
                f"plan, then add `--confirm {plan.confirm}`",
            )
        if plan.blockers:
            first = plan.blockers[0]
            raise GateRefused(
                f"forget refused: {first['message']}"
                + (f" (and {len(plan.blockers) - 1} more)" if len(plan.blockers) > 1 else ""),
                hint=first["hint"],
            )
        return _run(kb, plan, actor)


def _run(kb: KB, plan: Plan, actor: str) -> dict[str, Any]:
    repo = kb.repo
    journal = dict(plan.journal or {})
    if journal.get("ids") not in (None, plan.ids):
        raise GateRefused(
            f"an interrupted purge of {', '.join(journal.get('ids') or [])} is not finished",
            hint="finish it first: run the same `vouch forget ... --purge-history "
            "--confirm ...` again",
        )
    journal.update({"ids": plan.ids, "tokens": len(plan.tokens)})
    if not journal.get("event"):
        purge.drop_staging(repo)
        journal["event"] = _record(kb, plan, actor)
        _save(kb, journal)
        fault("purge-recorded")
        plan = make(kb, plan.ids, plan.tokens)  # the event commit is history too
    moves = {r: (v[0], v[1]) for r, v in (journal.get("moves") or {}).items()}
    if not journal.get("switched") and moves:
        where = purge.all_refs(repo)
        if all(where.get(r) == new for r, (_, new) in moves.items()):
            journal["switched"] = True  # killed after the switch, before saying so
        elif not all(where.get(r) == old for r, (old, _) in moves.items()):
            moves = {}  # refs moved since: rewrite again from what they are now
    if not journal.get("switched"):
        if not moves:
            moves = _rewrite(kb, plan, journal)
        fault("purge-imported")
        purge.switch(repo, moves)
        fault("purge-switched")
        journal["switched"] = True
        _save(kb, journal)
        old_head, new_head = journal.get("old_head"), journal.get("new_head")
        if old_head and new_head and new_head != old_head:
            purge.move_work_tree(repo, old_head, new_head)
        shutil.rmtree(kb.state_dir / "forget", ignore_errors=True)
    else:
        _finish_work_tree(kb, plan)
    purge.forget_unreachable(repo)
    fault("purge-pruned")
    cleared = _clear_caches(kb)
    left = [b for b in sorted(plan.blobs) if purge.present(repo, b)]
    tokens_left = sum(len(purge.objects_holding(repo, t.encode())) for t in plan.tokens)
    with contextlib.suppress(FileNotFoundError):
        (kb.state_dir / JOURNAL).unlink()
    return {
        "ok": not left and not tokens_left,
        "purged": plan.ids,
        "paths": plan.paths,
        "event": journal["event"],
        "commits_rewritten": journal.get("rewritten", 0),
        "refs_moved": journal.get("moves", {}),
        "head": {"old": journal.get("old_head"), "new": journal.get("new_head")},
        "bytes_left_here": len(left),
        "token_objects_left_here": tokens_left,
        "cleared": cleared,
        "remotes": plan.remotes,
        "limits": plan.to_json(kb)["limits"],
    }


def _rewrite(kb: KB, plan: Plan, journal: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The new history written beside the old (`purge.rewrite`), and the ref moves that
    switch to it, recorded in the journal before any ref moves."""
    repo = kb.repo
    purge.drop_staging(repo)
    old_head = repo.peek(repo.head_branch())
    work = kb.state_dir / "forget"
    work.mkdir(parents=True, exist_ok=True)
    gone = set(plan.paths)
    done = purge.rewrite(
        repo, plan.boundary, gone.__contains__, messages.scrubber(plan.ids, plan.tokens), work
    )
    moves = {}
    for ref, old in purge.all_refs(repo).items():
        new = done.tags.get(ref) or done.commits.get(old)
        # a ref that does not reach the bytes stays: re-exported, a signed commit of an
        # unrelated branch would come back unsigned under a new id
        if new and new != old and ref in plan.reaching:
            moves[ref] = (old, new)
    journal.update(
        {
            "old_head": old_head,
            "new_head": done.commits.get(old_head or "", old_head),
            "moves": {r: list(v) for r, v in sorted(moves.items())},
            "rewritten": len(done.commits),
        }
    )
    _save(kb, journal)
    return moves


def _record(kb: KB, plan: Plan, actor: str) -> str:
    """The audit event of the purge: who, which ids, how much history; no content."""
    from vouch.store.writer import commit_direct

    data = {
        "paths": len(plan.paths),
        "commits_holding": len(plan.touched),
        "commits_rewritten": len(plan.rewritten),
        "tokens": len(plan.tokens),
        "refs": len(plan.reaching),
    }
    return commit_direct(
        kb,
        {},
        subject=f"forget {len(plan.ids)} object(s): history purged",
        event=EVENT,
        actor=actor,
        object_ids=plan.ids,
        data=data,
    )


def _finish_work_tree(kb: KB, plan: Plan) -> None:
    """After a kill between the switch and the work tree's move: the forgotten files,
    left behind untracked, go; the index and work tree follow HEAD (the plan refused
    any other change)."""
    repo = kb.repo
    purge.reset_work_tree(repo)
    for path in plan.paths:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            (repo.root / path).unlink()


def _clear_caches(kb: KB) -> list[str]:
    """Every local store of the words: the warm process, the derived index (in the
    repository and in the per-user cache), the search log; then a new index."""
    from vouch import forward
    from vouch.index import location
    from vouch.index.handle import rebuild_index
    from vouch.index.settings import Settings
    from vouch.search import log as search_log

    cleared = []
    # a warm process keeps the old index in memory: asked to stop here, and one that does
    # not answer (busy, stopped) refuses its next command and exits (`servers.warm`)
    fsio.write_atomic(kb.state_dir / PURGED, f"{time.time()}\n")
    place = forward.place_of(kb.dir)
    if place is not None and forward.ask(place, "stop") not in (None, forward.SILENT):
        cleared.append("warm process")
    settings = Settings.of(kb)
    for where in {settings.index_dir, location.in_cache(settings.kb_path).path}:
        if where.is_dir() and not where.is_symlink():
            shutil.rmtree(where)
            cleared.append(str(where))
    log = search_log.log_path(kb.dir)
    if log.is_file() and not log.is_symlink():
        log.unlink()
        cleared.append(str(log))
    rebuild_index(kb)
    return cleared


def _save(kb: KB, journal: dict[str, Any]) -> None:
    fsio.write_atomic(kb.state_dir / JOURNAL, json.dumps(journal, indent=1) + "\n")
