"""Handlers for the provenance methods: thin adapters from CallContext to `vouch.history`."""

from __future__ import annotations

from typing import Any

from vouch.methods.context import CallContext


def why(ctx: CallContext, id: str) -> dict[str, Any]:
    from vouch.history.why import why as explain

    return explain(ctx.kb, id)


def log(ctx: CallContext, id: str | None = None, rev: str = "HEAD", limit: int = 50) -> Any:
    from vouch.history.log import log as history_log

    return history_log(ctx.kb, id, rev, limit or None)


def diff(ctx: CallContext, revisions: str) -> dict[str, Any]:
    from vouch.history.diff import diff as knowledge_diff

    return knowledge_diff(ctx.kb, revisions)


def blame(ctx: CallContext, id: str, rev: str = "HEAD") -> dict[str, Any]:
    from vouch.history.blame import blame as page_blame

    return page_blame(ctx.kb, id, rev)


def impact(ctx: CallContext, id: str) -> dict[str, Any]:
    from vouch.history.impact import impact as rests_on

    return rests_on(ctx.kb, id)
