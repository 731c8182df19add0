"""Handlers for the read and intake methods: thin adapters from CallContext to the core."""

from __future__ import annotations

from typing import Any

from vouch.core.ids import check_id
from vouch.errors import CorruptFile
from vouch.kinds import KINDS, Obj, kind_named
from vouch.methods.context import CallContext


def status(ctx: CallContext) -> dict[str, Any]:
    from vouch.index.location import invalid_files
    from vouch.search.catalog import index_status  # issue 5: search-output.md index fields

    found = index_status(ctx.kb)
    # knowledge files the index leaves out (`vouch index status` names them)
    found["invalid_files"] = 0 if found["index_state"] == "missing" else invalid_files(ctx.kb.dir)
    from vouch.gate.committed import settings_at
    from vouch.gate.deciders import self_approval_note

    tip = ctx.kb.repo.peek("HEAD")
    try:
        note = self_approval_note(settings_at(ctx.kb, tip)) if tip else None
    except CorruptFile as exc:
        note = None
        found["review_settings"] = exc.message  # doctor reports it; approve refuses

    if note:
        found["self_approval"] = note
    return {**ctx.kb.status(), **found}


def read(ctx: CallContext, kind: str, id: str) -> Obj | None:
    check_id(id)
    return ctx.kb.read(KINDS[kind], id)


def read_page(ctx: CallContext, id: str) -> Obj | None:
    return read(ctx, "page", id)


def read_claim(ctx: CallContext, id: str) -> Obj | None:
    return read(ctx, "claim", id)


def read_entity(ctx: CallContext, id: str) -> Obj | None:
    return read(ctx, "entity", id)


def read_relation(ctx: CallContext, id: str) -> Obj | None:
    return read(ctx, "relation", id)


def list_kind(
    ctx: CallContext,
    kind: str,
    limit: int = 50,
    offset: int = 0,
    filter: dict[str, Any] | None = None,
    envelope: bool = False,
) -> list[Obj] | dict[str, Any]:
    """Objects of a kind, each with the listing fields of search-output.md (title,
    type, tags, created_at, chunk_count) on every transport alike; `limit` 0 lists
    them all. With `envelope`, also how many there are in all and where the next page
    starts (`next_offset`, null on the last page), so a listing never stops silently."""
    from vouch.search.catalog import annotate_list

    found = kind_named(kind)
    rows = ctx.kb.list(found, limit=limit or None, offset=offset, filter=filter)
    annotate_list(ctx.kb, found, rows)
    if not envelope:
        return rows
    total = len(ctx.kb.list(found, limit=None, filter=filter)) if filter else ctx.kb.count(found)
    end = offset + len(rows)
    return {
        "items": rows,
        "total": total,
        "offset": offset,
        "next_offset": end if limit and end < total else None,
    }


def list_pages(ctx: CallContext, **kw: Any) -> list[Obj] | dict[str, Any]:
    return list_kind(ctx, "pages", **kw)


def list_claims(ctx: CallContext, **kw: Any) -> list[Obj] | dict[str, Any]:
    return list_kind(ctx, "claims", **kw)


def list_entities(ctx: CallContext, **kw: Any) -> list[Obj] | dict[str, Any]:
    return list_kind(ctx, "entities", **kw)


def list_relations(ctx: CallContext, **kw: Any) -> list[Obj] | dict[str, Any]:
    return list_kind(ctx, "relations", **kw)


def list_sources(ctx: CallContext, **kw: Any) -> list[Obj] | dict[str, Any]:
    return list_kind(ctx, "sources", **kw)


def register_source(
    ctx: CallContext,
    content: str,
    locator: str,
    type: str = "file",
    title: str | None = None,
    media_type: str | None = None,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    from vouch.store import supplied

    return supplied.register_source(
        ctx.kb, ctx.actor(), content, locator, type, title, media_type, tags
    )


def register_source_from_path(
    ctx: CallContext,
    path: str,
    type: str | None = None,
    title: str | None = None,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """Confined to the work tree, always: reading outside is a person's CLI opt-in
    (`vouch source add --allow-outside`), never a parameter an agent could pass."""
    from vouch.store import sources

    return sources.register_source_from_path(ctx.kb, ctx.actor(), path, type, title, tags)
