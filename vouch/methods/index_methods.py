"""The kb.* methods of the derived index: rebuild and status (issue 4)."""

from __future__ import annotations

from vouch.methods.shape import Cli, Method, Param

_HUMAN = "vouch.cli.human:"
_methods: list[Method] = []


def register(method: Method) -> Method:
    """Collect one declaration (the registry registers `METHODS`, in this order)."""
    _methods.append(method)
    return method


register(
    Method(
        "kb.index_rebuild",
        "maintenance",
        "Rebuild the derived search index from the files (atomic: built aside, swapped in).",
        "vouch.methods.index:index_rebuild",
        (
            Param(
                "force",
                {"type": "boolean"},
                default=False,
                description="replace an index that belongs to another knowledge base (E003)",
            ),
        ),
        cli=Cli(verb=("index", "rebuild"), human=f"{_HUMAN}rebuilt"),
    )
)
register(
    Method(
        "kb.index_status",
        "read",
        "The search index: fresh/stale/missing/corrupt, counts, model, sizes.",
        "vouch.methods.index:index_status",
        cli=Cli(verb=("index", "status"), human=f"{_HUMAN}index_status"),
    )
)

METHODS: tuple[Method, ...] = tuple(_methods)
