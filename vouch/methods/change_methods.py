"""The kb.* methods that propose a change to approved knowledge for a person to decide
(issue 38): re-cite, archive, redact, delete (`vouch.gate.changes`), and `source refresh`,
which opens the re-citations a drifted source calls for. Proposing is not deciding: an
agent may propose a change (scope `propose`); approve decides it, as any proposal."""

from __future__ import annotations

from typing import Any

from vouch.methods.context import CallContext
from vouch.methods.shape import Cli, Method, Param, string_list

_HERE = "vouch.methods.change_methods:"
_HUMAN = "vouch.cli.human_changes:"
_RATIONALE = Param(
    "rationale", {"type": "string"}, description="why; recorded on the proposal for the reviewer"
)
_REASON = Param(
    "reason",
    {"type": "string"},
    required=True,
    description="why; recorded on the proposal for the reviewer",
)


def _target(description: str) -> Param:
    return Param("id", {"type": "string"}, required=True, description=description, ids=True)


def propose_change(
    ctx: CallContext,
    id: str,
    op: str,
    evidence: str | None = None,
    drop: list[str] | None = None,
    also: list[str] | None = None,
    rationale: str | None = None,
) -> dict[str, Any]:
    from vouch.gate.propose_change import propose_change as propose

    return propose(
        ctx.kb,
        ctx.identity(),
        id,
        op,
        evidence=evidence,
        drop=drop or (),
        also=also or (),
        rationale=rationale,
    )


def redact(ctx: CallContext, id: str, reason: str) -> dict[str, Any]:
    return propose_change(ctx, id, "redact", rationale=reason)


def delete(ctx: CallContext, id: str, reason: str, also: list[str] | None = None) -> dict[str, Any]:
    return propose_change(ctx, id, "delete", also=also, rationale=reason)


def source_refresh(ctx: CallContext, paths: list[str] | None = None) -> dict[str, Any]:
    from vouch.health.source_refresh import refresh

    return refresh(ctx.kb, ctx.identity(), paths)


METHODS: tuple[Method, ...] = (
    Method(
        "kb.propose_change",
        "propose",
        "Propose a change to an approved claim or page for a person to decide: re-cite it "
        "(a new <source>:<locator> in place of --drop citations), archive, redact or delete it.",
        f"{_HERE}propose_change",
        (
            _target("the approved claim (or page, entity, relation) to change"),
            Param(
                "op",
                {"type": "string", "enum": ["recite", "archive", "redact", "delete"]},
                required=True,
                description="recite, archive, redact or delete",
            ),
            Param(
                "evidence",
                {"type": "string"},
                description="recite: the new citation, <source-id>:L10-L20 (or docs/a.md:L10-L20)",
                ids=True,
            ),
            Param("drop", string_list(), description="recite: the citations it replaces", ids=True),
            Param("also", string_list(), description="delete: objects deleted with it", ids=True),
            _RATIONALE,
        ),
        writes=True,
        cli=Cli(args=("id",), emit=f"{_HUMAN}proposed"),
    ),
    Method(
        "kb.redact",
        "propose",
        "Propose redacting an approved claim, page or entity, or a source: once a person "
        "approves, its "
        "words are gone from the branch, the index and the search log; its id stays so "
        "citations resolve (a source's to 'redacted': its bytes and the evidence quotes go).",
        f"{_HERE}redact",
        (_target("the approved claim, page or entity, or the source (sha256), to redact"), _REASON),
        writes=True,
        cli=Cli(args=("id",), emit=f"{_HUMAN}proposed"),
    ),
    Method(
        "kb.delete",
        "propose",
        "Propose deleting an approved claim, page, entity or relation: what lists it is "
        "unlinked in the same proposal; what cannot stand without it must be deleted with "
        "it (--also).",
        f"{_HERE}delete",
        (
            _target("the approved object to delete"),
            _REASON,
            Param("also", string_list(), description="objects deleted with it", ids=True),
        ),
        writes=True,
        cli=Cli(args=("id",), emit=f"{_HUMAN}proposed"),
    ),
    Method(
        "kb.source_refresh",
        "propose",
        "For every file whose cited lines drifted: register its new version, and open one "
        "proposal per affected claim (re-cite moved lines; archive a claim whose lines "
        "changed or went) for a person to decide.",
        f"{_HERE}source_refresh",
        (
            Param(
                "paths",
                string_list(),
                description="only these files (repository-relative); default: every one",
            ),
        ),
        writes=True,
        cli=Cli(
            verb=("source", "refresh"), names={"paths": ("--path",)}, human=f"{_HUMAN}refreshed"
        ),
    ),
)
