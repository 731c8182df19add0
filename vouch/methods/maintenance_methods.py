"""The kb.* methods for lint, doctor and source verification (issue 13): declarations
and handlers. The checks themselves live in `vouch.health`; each handler is one call."""

from __future__ import annotations

from typing import Any

from vouch.methods.context import CallContext
from vouch.methods.shape import Cli, Method, Param

_HUMAN = "vouch.cli.human_maintenance:"


def lint(
    ctx: CallContext, stale_days: int | None = None, staged: bool = False, since: str | None = None
) -> dict[str, Any]:
    from vouch.health.lint import lint as run

    return run(ctx.kb, stale_days=stale_days, staged=staged, since=since, progress=ctx.progress)


def source_verify(ctx: CallContext, id: str | None = None) -> dict[str, Any]:
    from vouch.health.verify import verify_sources

    return verify_sources(ctx.kb, id)


def gate_stats(ctx: CallContext, stale_days: int | None = None) -> dict[str, Any]:
    from vouch.health.gate_stats import gate_stats as run

    return run(ctx.kb, stale_days)


def doctor(ctx: CallContext) -> dict[str, Any]:
    from vouch.health.doctor import doctor as run

    return run(ctx.kb, ctx.progress)


METHODS: tuple[Method, ...] = (
    Method(
        "kb.lint",
        "maintenance",
        "Check knowledge files, their links and how they entered (decision records); "
        "issues {id, kind, severity, message, path}.",
        "vouch.methods.maintenance_methods:lint",
        (
            Param(
                "stale_days",
                {"type": "integer", "minimum": 0},
                description="warn about claims not confirmed for this many days "
                "(default review.stale_days, 180; 0: off)",
            ),
            Param(
                "staged",
                {"type": "boolean"},
                default=False,
                description="only what the index changes against HEAD, and what refers "
                "to it (the pre-commit hook)",
            ),
            Param(
                "since",
                {"type": "string"},
                description="only what changed since this commit, and prove every "
                "change of BASE..HEAD went through a decision (CI)",
            ),
        ),
        cli=Cli(human=f"{_HUMAN}lint"),
    ),
    Method(
        "kb.source_verify",
        "maintenance",
        "Check that every source's content hashes to its id, and that a file's current "
        "version holds bytes the file has or had (one source with id).",
        "vouch.methods.maintenance_methods:source_verify",
        (
            Param(
                "id", {"type": "string"}, description="one source id; omit to verify all", ids=True
            ),
        ),
        cli=Cli(verb=("source", "verify"), args=("id",), human=f"{_HUMAN}source_verify"),
    ),
    Method(
        "kb.doctor",
        "maintenance",
        "Lint, source verification, index state, audit chain and config drift in one "
        "report with a verdict.",
        "vouch.methods.maintenance_methods:doctor",
        cli=Cli(human=f"{_HUMAN}doctor"),
    ),
    Method(
        "kb.gate_stats",
        "maintenance",
        "Whether review keeps up: pending proposals and their age, decisions per week, "
        "rejection reasons, time from proposal to decision, citation coverage of live "
        "claims, claims unconfirmed for review.stale_days, claims whose cited lines drifted.",
        "vouch.methods.maintenance_methods:gate_stats",
        (
            Param(
                "stale_days",
                {"type": "integer", "minimum": 0},
                description="count claims not confirmed for this many days "
                "(default review.stale_days, 180; 0: off)",
            ),
        ),
        cli=Cli(verb=("gate-stats",), emit=f"{_HUMAN}gate_stats"),
    ),
)
