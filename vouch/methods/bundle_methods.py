"""The kb.* methods for export and import bundles (issue 13): declarations and handlers.
The format, the checks and the import live in `vouch.bundle`; each handler is one call.

Who may: a bundle is a file outside git, so over an agent transport (JSONL, MCP) every
path must lie inside the repository (as for `kb.register_source_from_path`), and an
agent's export never replaces a file that exists. Agents may export and check; applying
an import is a person's decision, like approve, made at the CLI — `kb.import_apply`
refuses every other transport, whatever the server allows.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vouch.errors import GateRefused
from vouch.methods.context import CallContext
from vouch.methods.shape import Cli, Method, Param

_HUMAN = "vouch.cli.human_bundle:"
_HERE = "vouch.methods.bundle_methods:"
_PATH = Param(
    "path",
    {"type": "string", "format": "path"},
    required=True,
    description="a bundle file (.tar.gz) written by `vouch export`",
)


def _bundle_path(ctx: CallContext, path: str) -> Path:
    """The file a bundle parameter names; agents reach only files in the repository."""
    from vouch.store.sources import confine, resolve_path

    target = Path(os.path.abspath(resolve_path(path)))
    if ctx.transport != "cli":
        confine(ctx.kb, target)
    return target


def export(ctx: CallContext, out: str) -> dict[str, Any]:
    from vouch import bundle

    target = _bundle_path(ctx, out)
    if ctx.transport != "cli" and (target.exists() or target.is_symlink()):
        raise GateRefused(
            f"{out} exists; an export over {ctx.transport} never replaces a file",
            hint="name a new file, or remove that one first",
        )
    return bundle.export(ctx.kb, target, ctx.progress)


def export_check(ctx: CallContext, path: str) -> dict[str, Any]:
    from vouch import bundle
    from vouch.bundle.reading import Limits
    from vouch.errors import NoKnowledgeBase

    try:  # checking a bundle needs no knowledge base; one's configuration sets the limits
        limits = Limits.of(ctx.kb.config)
    except NoKnowledgeBase:
        limits = Limits()
    return bundle.check(_bundle_path(ctx, path), ctx.progress, limits)[1]


def import_check(ctx: CallContext, path: str) -> dict[str, Any]:
    from vouch import bundle

    return bundle.import_check(ctx.kb, _bundle_path(ctx, path), ctx.progress)


def import_apply(ctx: CallContext, path: str, on_conflict: str = "skip") -> dict[str, Any]:
    from vouch import bundle

    if ctx.transport != "cli":
        raise GateRefused(
            f"kb.import_apply: importing a bundle is a person's decision, like approving, and "
            f"is never made over {ctx.transport}; an agent may check a bundle "
            "(kb.export_check, kb.import_check)",
            hint="a person runs `vouch import-apply PATH` at the CLI",
        )
    from vouch.methods.deciding import require_decider

    require_decider(ctx, "kb.import_apply")
    return bundle.import_apply(
        ctx.kb, ctx.actor(), _bundle_path(ctx, path), on_conflict, ctx.progress
    )


METHODS: tuple[Method, ...] = (
    Method(
        "kb.export",
        "maintenance",
        "Write the knowledge committed on the checked-out branch to a bundle (.tar.gz with "
        "a manifest; no config, index or pending proposals).",
        f"{_HERE}export",
        (
            Param(
                "out",
                {"type": "string", "format": "path"},
                required=True,
                description="the bundle file to write (replaced atomically)",
            ),
        ),
        cli=Cli(human=f"{_HUMAN}exported"),
    ),
    Method(
        "kb.export_check",
        "maintenance",
        "Check a bundle without extracting it: every member against the manifest, no "
        "unsafe member, every knowledge file valid for its id.",
        f"{_HERE}export_check",
        (_PATH,),
        cli=Cli(args=("path",), repeat=True, human=f"{_HUMAN}checked"),
    ),
    Method(
        "kb.import_check",
        "maintenance",
        "What importing a checked bundle would do here: new, conflicting and identical "
        "objects (ids), and which import-apply --on-conflict mode lands it (on_conflict, "
        "refused, hint).",
        f"{_HERE}import_check",
        (_PATH,),
        cli=Cli(args=("path",), human=f"{_HUMAN}import_plan"),
    ),
    Method(
        "kb.import_apply",
        "maintenance",
        "Import a checked bundle into the checked-out branch: one audited commit (a "
        "person's decision: CLI only).",
        f"{_HERE}import_apply",
        (
            _PATH,
            Param(
                "on_conflict",
                {"type": "string", "enum": ["skip", "overwrite", "fail"]},
                default="skip",
                description="an object that exists here with other content: keep ours "
                "(skip), take the bundle's (overwrite), or refuse the import "
                "(fail)",
            ),
        ),
        writes=True,
        cli=Cli(args=("path",), human=f"{_HUMAN}imported"),
        decision=True,
    ),
)
