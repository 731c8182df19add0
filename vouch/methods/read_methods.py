"""The kb.* methods that read and register: status, objects, listings, sources."""

from __future__ import annotations

from vouch.kinds import source as source_kind
from vouch.methods.shape import OBJECT_ID, PAGING, Cli, Method, Param, string_list

_HUMAN = "vouch.cli.human:"
_methods: list[Method] = []


def register(method: Method) -> Method:
    """Collect one declaration (the registry registers `METHODS`, in this order)."""
    _methods.append(method)
    return method


register(
    Method(
        "kb.capabilities",
        "read",
        "What this server offers (methods, retrieval, transports) and may_write / "
        "may_decide for this caller.",
        "vouch.methods.registry:capabilities",
        cli=Cli(human=f"{_HUMAN}capabilities"),
        agent_read=True,
    )
)

register(
    Method(
        "kb.status",
        "read",
        "Counts of knowledge, pending proposals, last audit time.",
        "vouch.methods.reads:status",
        cli=Cli(human=f"{_HUMAN}status"),
        agent_read=True,
    )
)
for _kind in ("page", "claim", "entity", "relation"):
    register(
        Method(
            f"kb.read_{_kind}",
            "read",
            f"Read one {_kind} by id (null when absent).",
            f"vouch.methods.reads:read_{_kind}",
            (OBJECT_ID,),
            cli=Cli(verb=("read", _kind), args=("id",), human=f"{_HUMAN}read"),
            agent_read=True,
        )
    )
_ENVELOPE = Param(
    "envelope",
    {"type": "boolean"},
    default=False,
    description="return {items, total, offset, next_offset} instead of the bare array",
)
for _plural in ("pages", "claims", "entities", "relations", "sources"):
    register(
        Method(
            f"kb.list_{_plural}",
            "read",
            f"List {_plural}, sorted by id (limit 0: all of them).",
            f"vouch.methods.reads:list_{_plural}",
            (*PAGING, _ENVELOPE),
            cli=Cli(verb=("list", _plural), human=f"{_HUMAN}listing", presets={"envelope": True}),
        )
    )

_SOURCE_TYPE = {"type": "string", "enum": list(source_kind.TYPES)}
register(
    Method(
        "kb.register_source",
        "intake",
        "Store text as a content-addressed source (not gated). Text is never a new "
        "version of a file: a locator naming a file of the work tree needs the file's "
        "exact bytes (else refused: register the file with kb.register_source_from_path); "
        "a path naming no file is recorded as inline:<locator>.",
        "vouch.methods.reads:register_source",
        (
            Param("content", {"type": "string"}, required=True, description="UTF-8 text content"),
            Param("type", _SOURCE_TYPE, default="file"),
            Param(
                "locator",
                {"type": "string"},
                required=True,
                description="where the content came from: URL, message id, or a path "
                "(recorded as inline:<path> unless it is a file with these bytes)",
            ),
            Param("title", {"type": "string"}),
            Param("media_type", {"type": "string"}),
            Param("tags", string_list()),
        ),
        writes=True,
        cli=Cli(verb=("source", "register"), args=("content",), human=f"{_HUMAN}registered"),
    )
)
register(
    Method(
        "kb.register_source_from_path",
        "intake",
        "Store a file as a content-addressed source.",
        "vouch.methods.reads:register_source_from_path",
        (
            Param(
                "path",
                {"type": "string", "format": "path"},
                required=True,
                description="absolute or repo-relative",
            ),
            Param("type", _SOURCE_TYPE),
            Param("title", {"type": "string"}),
            Param("tags", string_list()),
        ),
        writes=True,
        cli=Cli(verb=("source", "add"), args=("path",), human=f"{_HUMAN}registered"),
    )
)

METHODS: tuple[Method, ...] = tuple(_methods)
