"""The kb.* search methods: search, tags, info (issue 5)."""

from __future__ import annotations

from vouch.methods.shape import OBJECT_ID, Cli, Method, Param, string_list

_HUMAN = "vouch.cli.human:"
_methods: list[Method] = []


def register(method: Method) -> Method:
    """Collect one declaration (the registry registers `METHODS`, in this order)."""
    _methods.append(method)
    return method


_SEARCH_KIND = {
    "type": "string",
    "enum": [
        "claim",
        "page",
        "entity",
        "relation",
        "source",
        "claims",
        "pages",
        "entities",
        "relations",
        "sources",
    ],
}


def _known(name: str) -> list[str]:
    """Every value of the searchable kinds' TYPES or STATUSES, in the kinds' order."""
    from vouch.kinds import claim, entity, page, relation, source

    values: dict[str, None] = {}
    for module in (claim, page, entity, relation, source):
        values.update(dict.fromkeys(getattr(module, name, ())))
    return list(values)


register(
    Method(
        "kb.search",
        "read",
        "Hybrid search (BM25 + vectors, blended) over approved knowledge and sources.",
        "vouch.search.api:kb_search",
        (
            Param("query", {"type": "string"}, required=True, description="any text"),
            Param(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 10_000},
                description="results per page (default search.default_top, 10)",
            ),
            Param("kinds", {"type": "array", "items": _SEARCH_KIND}),
            Param(
                "mode",
                {"type": "string", "enum": ["hybrid", "fts", "vector"]},
                default="hybrid",
                description="fts: lexical only; vector: embeddings only",
            ),
            Param("tags", string_list(), description="documents carrying every one of these"),
            Param(
                "types",
                {"type": "array", "items": {"type": "string", "enum": _known("TYPES")}},
                description="claim/page/entity/relation/source types",
                checked_later=True,
            ),
            Param(
                "statuses",
                {"type": "array", "items": {"type": "string", "enum": _known("STATUSES")}},
                description="only these statuses (superseded/archived/redacted: only if named)",
                checked_later=True,
            ),
            Param(
                "speakers",
                string_list(),
                description="only transcript turns said by one of these (case-insensitive)",
            ),
            Param(
                "since",
                {"type": "string"},
                description="only transcript turns from this ISO date or time on",
            ),
            Param(
                "until",
                {"type": "string"},
                description="only transcript turns up to this ISO date or time (inclusive)",
            ),
            Param(
                "threshold",
                {"type": "number"},
                description="the lowest score kept (as results show it)",
            ),
            Param("rrf_k", {"type": "number", "minimum": 0}, description="RRF k (default 60)"),
            Param("cursor", {"type": "string"}, description="next_cursor of a previous response"),
            Param(
                "max_tokens",
                {"type": "integer", "minimum": 1},
                description="token budget (chars/4) for the results",
            ),
            Param("trace", {"type": "boolean"}, description="add channel lists and timings"),
            Param("include_pending", {"type": "boolean"}, description="also search open proposals"),
            Param(
                "envelope",
                {"type": "boolean"},
                description="return the whole response (cursor, truncated, trace), not the hits",
            ),
            Param(
                "kbs",
                string_list(),
                description="search these knowledge bases of the user's registry together "
                '(names, or ["all"]; a person registers them with `vouch kb add`): each hit '
                "names its base (`kb`), the envelope reports each base's state (`bases`)",
            ),
        ),
        cli=Cli(
            args=("query",),
            presets={"envelope": True},
            names={
                "kbs": ("--kbs",),
                "limit": ("--top", "--limit"),
                "kinds": ("--kind",),
                "types": ("--type",),
                "statuses": ("--status",),
                "speakers": ("--speaker",),
            },
            human="vouch.search.human:render",
        ),
        agent_read=True,
    )
)
register(
    Method(
        "kb.tags",
        "read",
        "Every tag with the number of objects carrying it.",
        "vouch.search.catalog:tags",
        cli=Cli(human=f"{_HUMAN}tags"),
    )
)
register(
    Method(
        "kb.info",
        "read",
        "What the index holds for one object: chunks, headings.",
        "vouch.search.catalog:info",
        (OBJECT_ID,),
        cli=Cli(args=("id",), human=f"{_HUMAN}info"),
    )
)

METHODS: tuple[Method, ...] = tuple(_methods)
