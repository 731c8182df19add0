"""The kb.* methods for context packs (issue 12): declarations and handlers.

`kb.context` packs the approved knowledge most relevant to a task into a character
budget (`vouch.search.context`); `vouch context TASK` prints it as markdown, ready to
paste into a prompt (`--json` for the ContextPack itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vouch.methods.shape import Cli, Method, Param

if TYPE_CHECKING:
    from vouch.methods.context import CallContext


def context(
    ctx: CallContext,
    task: str,
    max_chars: int = 4000,
    min_items: int = 0,
    require_citations: bool = False,
    kbs: list[str] | None = None,
) -> dict[str, Any]:
    if kbs:  # registered names only (`store.kb_registry`): no transport reaches a path
        from vouch.search.context_across import build_across

        return build_across(
            kbs,
            task,
            max_chars=max_chars,
            min_items=min_items,
            require_citations=require_citations,
            warm=ctx.warm,
            transport=ctx.transport,
        )
    from vouch.search.context import build

    return build(
        ctx.kb,
        task,
        max_chars=max_chars,
        min_items=min_items,
        require_citations=require_citations,
        warm=ctx.warm,
        transport=ctx.transport,
        progress=ctx.progress,
    )


METHODS: tuple[Method, ...] = (
    Method(
        "kb.context",
        "read",
        "The approved claims and page sections most relevant to a task (with their "
        "entity/relation neighbourhood and citations), packed into a character budget; "
        "when none matches, the best source passages, marked unreviewed (`unreviewed`), "
        "and how to make them reviewed knowledge (`next_step`).",
        "vouch.methods.context_methods:context",
        (
            Param(
                "task",
                {"type": "string"},
                required=True,
                description="natural-language task description",
            ),
            Param(
                "max_chars",
                {"type": "integer", "minimum": 1, "maximum": 1_000_000},
                default=4000,
                description="budget for the items' text",
            ),
            Param(
                "min_items",
                {"type": "integer", "minimum": 0, "maximum": 1000},
                default=0,
                description="hold at least this many items when that many are relevant",
            ),
            Param(
                "require_citations",
                {"type": "boolean"},
                default=False,
                description="leave out items that cite no source, evidence or claim",
            ),
            Param(
                "kbs",
                {"type": "array", "items": {"type": "string"}},
                description="draw from these knowledge bases of the user's registry (names, or "
                '["all"]; a person registers them with `vouch kb add`): each item names its '
                "base (`kb`), `bases` reports each base's state",
            ),
        ),
        cli=Cli(
            args=("task",),
            names={"kbs": ("--kbs",)},
            format="markdown",
            human="vouch.cli.human_context:markdown",
        ),
        agent_read=True,
    ),
)
