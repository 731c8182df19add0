"""What the page's forms do, and what a proposal's page reads besides its screen. Every
decision is the registry's kb.approve / kb.reject / kb.comment_proposal, called with the
CLI's own `CallContext` (transport "cli": the person who started `vouch ui`, as git
names them, refused while VOUCH_AGENT declares an agent, signing as git is set to) —
the same code path as `vouch approve`, never a second one.

Each form carries the commit its page showed. Approve and reject pin it (`expect`:
refused if the branch moved since, under the gate's lock); approving together pins each
member by the commit `vouch show` recorded when its page was shown
(refs/vouch/reviewed/<id>), and the form's commits must be those.
"""

from __future__ import annotations

from typing import Any

from vouch.errors import GateRefused, UsageError
from vouch.gate import records
from vouch.methods import registry as ops
from vouch.methods.context import CallContext

MAX_TOGETHER = 50


def pending_rows(ctx: CallContext) -> list[dict[str, Any]]:
    return list(ops.invoke(ctx, "kb.list_pending", {"limit": 1_000_000}))


def shown_at(ctx: CallContext, pid: str) -> str | None:
    """The commit a reviewer was last shown of proposal `pid` in this clone."""
    return ctx.kb.repo.peek(records.REVIEWED_PREFIX + pid)


Member = tuple[str, str, bool, str]  # (proposal id, its commit now, shown at it?, title)


def linked(ctx: CallContext, data: dict[str, Any]) -> list[Member]:
    """Those this proposal waits for, and itself: each with its commit now, whether it
    was shown at that commit, and its title."""
    waits = sorted({str(w["proposal_id"]) for w in data.get("waits_for") or []})
    if not waits:
        return []
    out: list[Member] = []
    for pid in waits:
        found = records.find(ctx.kb, pid)
        out.append((pid, found.commit, shown_at(ctx, pid) == found.commit, found.title))
    here, commit = str(data["proposal_id"]), str(data.get("commit") or "")
    title = str(data.get("title") or "")
    return [*out, (here, commit, shown_at(ctx, here) == commit, title)]


def _commit(form: dict[str, list[str]]) -> str:
    found = form.get("commit") or []
    if len(found) != 1 or not found[0]:
        raise UsageError("the form names no commit", hint="reload the proposal's page")
    return found[0]


def _one(form: dict[str, list[str]], name: str) -> str | None:
    found = form.get(name) or []
    return found[0] if len(found) == 1 else None


def approve(ctx: CallContext, pid: str, form: dict[str, list[str]]) -> dict[str, Any]:
    """kb.approve of the commit the form names, which a page must have shown (as
    together: a form built for a proposal nobody opened decides nothing)."""
    reason = (_one(form, "reason") or "").strip() or None
    commit = _commit(form)
    if shown_at(ctx, pid) != commit:
        raise GateRefused(
            f"proposal {pid} was not shown at {str(commit)[:12]}: a decision is about what "
            "someone saw",
            hint=f"open /p/{pid}, read it, then approve it",
        )
    params = {"proposal_id": pid, "expect": commit, "reason": reason}
    return _forgetting(ctx, dict(ops.invoke(ctx, "kb.approve", params)))


def reject(ctx: CallContext, pid: str, form: dict[str, list[str]]) -> dict[str, Any]:
    params = {"proposal_id": pid, "expect": _commit(form), "reason": _one(form, "reason") or ""}
    return dict(ops.invoke(ctx, "kb.reject", params))


def comment(ctx: CallContext, pid: str, form: dict[str, list[str]]) -> dict[str, Any]:
    """A comment is about the revision the page showed: refused if the branch moved."""
    commit = _commit(form)
    now = records.find(ctx.kb, pid).commit
    if now != commit:
        raise _moved(pid, commit, now)
    return dict(
        ops.invoke(
            ctx, "kb.comment_proposal", {"proposal_id": pid, "text": _one(form, "text") or ""}
        )
    )


def approve_together(ctx: CallContext, form: dict[str, list[str]]) -> dict[str, Any]:
    """kb.approve of every pinned proposal at once, after checking that each is still
    the commit the page showed and the one its page recorded as shown."""
    pins = form.get("pin") or []
    if not 2 <= len(pins) <= MAX_TOGETHER:
        raise UsageError("approving together needs two or more proposals", hint="reload the page")
    wanted: list[str] = []
    for pin in pins:
        pid, _, commit = pin.partition("@")
        records.check_proposal_id(pid)
        now = records.find(ctx.kb, pid).commit
        if now != commit:
            raise _moved(pid, commit, now)
        if shown_at(ctx, pid) != commit:
            raise GateRefused(
                f"proposal {pid} was not shown at {commit[:12]}: a decision is about what "
                "someone saw",
                hint=f"open /p/{pid}, read it, then approve them together",
            )
        wanted.append(pid)
    reason = (_one(form, "reason") or "").strip() or None
    params = {"proposal_id": wanted[-1], "together": wanted[:-1], "reason": reason}
    return _forgetting(ctx, dict(ops.invoke(ctx, "kb.approve", params)))


def _forgetting(ctx: CallContext, result: dict[str, Any]) -> dict[str, Any]:
    """A redaction or deletion approved here ends the warm process (its memory)."""
    from vouch.servers.warm_stop import after_forgetting

    after_forgetting(ctx.kb, result.get("approved") or [result])
    return result


def _moved(pid: str, shown: str, now: str) -> GateRefused:
    return GateRefused(
        f"proposal {pid} is now commit {now}, not the {shown} this page showed: it changed",
        hint="read it again (the page now shows the new commit), then decide",
    )
