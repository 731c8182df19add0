"""Named customisations layered on generated commands (aws-cli style).

Each adds CLI-only sugar to one registry method's command: flags that are spellings of
a parameter (`--fts-only` is `mode: fts`), a person's opt-ins that agents never get
(`source add --allow-outside`, `--recursive`, stdin), a progress bar. None adds a
parameter the method lacks: what a command sends is still validated by the registry.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import click

from vouch.cli.calling import emit, params_from
from vouch.cli.options import Output
from vouch.errors import SourceTooLarge, UsageError
from vouch.methods import registry as ops
from vouch.methods.context import CallContext


class Custom(NamedTuple):
    """A method's command-line extras: options beyond its parameters, and a `run` that
    calls it in place of the generated command's."""

    options: Callable[[], list[click.Parameter]] = lambda: []
    run: Callable[[ops.Method, CallContext, Output, dict[str, Any]], None] | None = None


def _search(method: ops.Method, ctx: CallContext, out: Output, values: dict[str, Any]) -> None:
    fts_only, vec_only = values.pop("fts_only"), values.pop("vec_only")
    every = values.pop("all_kbs")
    if fts_only and vec_only:
        raise UsageError("--fts-only and --vec-only exclude each other")
    params = params_from(method, values)
    if every:
        if params.get("kbs"):
            raise UsageError("--all and --kbs exclude each other")
        params["kbs"] = ["all"]
    if fts_only or vec_only:
        params["mode"] = "fts" if fts_only else "vector"
    emit(method, out, ops.invoke(ctx, method.name, params))


def _context(method: ops.Method, ctx: CallContext, out: Output, values: dict[str, Any]) -> None:
    every = values.pop("all_kbs")
    params = params_from(method, values)
    if every:
        if params.get("kbs"):
            raise UsageError("--all and --kbs exclude each other")
        params["kbs"] = ["all"]
    emit(method, out, ops.invoke(ctx, method.name, params))


def _all_kbs(what: str) -> list[click.Parameter]:
    return [
        click.Option(
            ["--all", "all_kbs"],
            is_flag=True,
            help=f"{what} every registered knowledge base (`vouch kb list`); same as --kbs all.",
        )
    ]


def _search_options() -> list[click.Parameter]:
    return [
        click.Option(["--fts-only"], is_flag=True, help="Same as --mode fts."),
        click.Option(["--vec-only"], is_flag=True, help="Same as --mode vector."),
        *_all_kbs("Search"),
    ]


def _source_add(method: ops.Method, ctx: CallContext, out: Output, values: dict[str, Any]) -> None:
    """`vouch source add FILE|-|DIR`: stdin and folders are a person's conveniences;
    `--allow-outside` a person's opt-in, through the library (agents cannot reach it)."""
    from vouch.store import sources

    recursive, allow_outside = values.pop("recursive"), values.pop("allow_outside")
    folder_options = {
        "allow_outside": allow_outside,
        "include": _globs(values.pop("include")),
        "exclude": _globs(values.pop("exclude")),
        "all": values.pop("all_files"),
    }
    if not recursive and (folder_options["include"] or folder_options["exclude"]):
        raise UsageError("--include and --exclude choose files of a folder", hint="pass -r DIR")
    params = params_from(method, values)
    target, tags = params["path"], params.get("tags") or []
    if target == "-":
        limit = sources.max_bytes(ctx.kb)
        data = sys.stdin.buffer.read(limit + 1)  # never more than one byte past the limit
        if len(data) > limit:
            raise SourceTooLarge(
                f"standard input holds more than {limit} bytes, the limit for a source "
                "(sources.max_bytes)",
                hint="register a smaller extract, or raise sources.max_bytes in .vouch/config.yaml",
            )
        item = sources.Intake(
            data,
            params.get("type") or "file",
            "stdin",
            params.get("title"),
            "text/plain",
            tuple(tags),
        )
        emit(method, out, sources.register_many(ctx.kb, [item], ctx.actor())[0])
        return
    if sources.target_path(ctx.kb, target).is_dir():  # as the library resolves it
        if not recursive:
            raise UsageError(f"{target} is a directory", hint="pass --recursive to add a folder")
        _add_folder(ctx, out, target, params, folder_options)
        return
    if allow_outside:
        emit(
            method,
            out,
            sources.register_source_from_path(
                ctx.kb,
                ctx.actor(),
                target,
                params.get("type"),
                params.get("title"),
                tags or None,
                allow_outside=True,
            ),
        )
        return
    emit(method, out, ops.invoke(ctx, method.name, params))


def _globs(given: tuple[str, ...]) -> list[str]:
    """Repeated options, commas separating values as for every list option."""
    return [g.strip() for item in given for g in item.split(",") if g.strip()]


def _add_folder(
    ctx: CallContext, out: Output, target: str, params: dict[str, Any], extra: dict[str, Any]
) -> None:
    from vouch.cli.human import registered
    from vouch.store import folder, sources

    kb = ctx.kb
    found = folder.intakes_under(
        kb,
        target,
        params.get("type"),
        params.get("tags") or [],
        allow_outside=extra["allow_outside"],
        include=extra["include"],
        exclude=extra["exclude"],
        everything=extra["all"],
        progress=ctx.progress,
    )
    results = sources.register_many(kb, found.items, ctx.actor(), progress=ctx.progress)
    for result, path in zip(results, found.paths, strict=True):
        result["path"] = path
    present = sum(1 for r in results if r["deduplicated"])
    report = {
        "items": results,
        "added": len(results) - present,
        "deduplicated": present,
        "skipped": [{"path": s.path, "reason": s.reason} for s in found.skipped],
    }
    if out.json:
        out.emit(report)
    else:
        for r in results:
            click.echo(registered(r))
    out.info(_folder_summary(report))


def _folder_summary(report: dict[str, Any]) -> str:
    """`added 3, already present 1, skipped 4: binary 2 (logo.png, font.woff), ...`"""
    skipped = report["skipped"]
    line = (
        f"added {report['added']}, already present {report['deduplicated']}, skipped {len(skipped)}"
    )
    by_reason: dict[str, list[str]] = {}
    for s in skipped:
        by_reason.setdefault(s["reason"], []).append(s["path"])
    parts = [
        f"{reason} {len(paths)} ({', '.join(paths[:3])}{', ...' if len(paths) > 3 else ''})"
        for reason, paths in by_reason.items()
    ]
    return line + (": " + "; ".join(parts) if parts else "")


def _source_add_options() -> list[click.Parameter]:
    return [
        click.Option(
            ["--recursive", "-r"],
            is_flag=True,
            help="Add every file below a directory, in one commit (symbolic links, hidden "
            "files and folders, files git ignores and binary files are skipped and counted).",
        ),
        click.Option(
            ["--include"],
            multiple=True,
            metavar="GLOB",
            help="With -r: only files matching a glob (repeatable; `*.rst`, `guide/*`).",
        ),
        click.Option(
            ["--exclude"],
            multiple=True,
            metavar="GLOB",
            help="With -r: leave out files matching a glob (repeatable; `*.css`, `_themes`).",
        ),
        click.Option(
            ["--all", "all_files"],
            is_flag=True,
            help="With -r: keep files git ignores and binary files too.",
        ),
        click.Option(
            ["--allow-outside"],
            is_flag=True,
            help="Read a file outside the repository (recorded by its absolute "
            "path). Agents can never do this.",
        ),
    ]


def _audit(method: ops.Method, ctx: CallContext, out: Output, values: dict[str, Any]) -> None:
    """`vouch audit --verify [--anchor TAG]` is `vouch audit-verify`, as the README has
    always said; `vouch audit anchor` is `vouch audit-anchor`."""
    verify, anchor, action = values.pop("verify"), values.pop("anchor"), values.pop("action")
    if action is not None:
        if action != "anchor" or verify or anchor:
            raise UsageError(
                f"vouch audit {action}: unknown action",
                hint="`vouch audit anchor` records the chain in a tag; `vouch audit --verify` "
                "checks it",
            )
        chosen = ops.get("kb.audit_anchor")
        emit(chosen, out, ops.invoke(ctx, chosen.name, {}))
        return
    if verify or anchor:
        _verified(ops.get("kb.audit_verify"), ctx, out, {"anchor": anchor})
        return
    emit(method, out, ops.invoke(ctx, method.name, params_from(method, values)))


def _verified(method: ops.Method, ctx: CallContext, out: Output, values: dict[str, Any]) -> None:
    """A broken log is a failed check: exit 1 after the report."""
    report = ops.invoke(ctx, method.name, {k: v for k, v in values.items() if v is not None})
    emit(method, out, report)
    if not report["ok"]:
        raise click.exceptions.Exit(1)


def _checked(method: ops.Method, ctx: CallContext, out: Output, values: dict[str, Any]) -> None:
    """A check with findings (lint, doctor, source verify) fails: exit 1 after the report."""
    report = ops.invoke(ctx, method.name, params_from(method, values))
    emit(method, out, report)
    if not report["ok"]:
        raise click.exceptions.Exit(1)


def _each_checked(
    method: ops.Method, ctx: CallContext, out: Output, values: dict[str, Any]
) -> None:
    """`vouch export-check PATH...`: one report per file (a pre-commit hook passes every
    staged bundle); exit 1 after the reports when any fails."""
    first = method.cli.args[0]
    reports = []
    for item in values.pop(first):
        reports.append(ops.invoke(ctx, method.name, params_from(method, {**values, first: item})))
        if not out.json:
            emit(method, out, reports[-1])
    if out.json:
        out.emit(reports if len(reports) != 1 else reports[0])
    if not all(r["ok"] for r in reports):
        raise click.exceptions.Exit(1)


def _approve(method: ops.Method, ctx: CallContext, out: Output, values: dict[str, Any]) -> None:
    """`vouch approve A B C`: one call that lands them together (all or none,
    dependencies first); the results in landing order."""
    given = list(values.pop("proposal_id"))
    params = params_from(method, {**values, "proposal_id": given[0]})
    params["together"] = [*given[1:], *(params.get("together") or [])] or None
    result = ops.invoke(ctx, method.name, params)
    results = result.get("approved") or [result]
    from vouch.servers.warm_stop import after_forgetting

    after_forgetting(ctx.kb, results)  # a redaction's words leave a warm process's memory
    if out.json:
        out.emit(results if len(results) != 1 else results[0])
        return
    for item in results:
        emit(method, out, item)


def _diff(method: ops.Method, ctx: CallContext, out: Output, values: dict[str, Any]) -> None:
    """`vouch diff --format markdown` draws what the range adds (a pull request shows it)."""
    params = params_from(method, values)
    if out.format == "markdown":
        params["graph"] = True
    emit(method, out, ops.invoke(ctx, method.name, params))


CUSTOM: dict[str, Custom] = {
    "kb.diff": Custom(run=_diff),
    "kb.approve": Custom(run=_approve),
    "kb.search": Custom(_search_options, _search),
    "kb.context": Custom(lambda: _all_kbs("Draw from"), _context),
    "kb.register_source_from_path": Custom(_source_add_options, _source_add),
    "kb.audit": Custom(
        lambda: [
            click.Argument(["action"], required=False, metavar="[anchor]"),
            click.Option(["--verify"], is_flag=True, help="Check the log instead of listing it."),
            click.Option(
                ["--anchor"],
                metavar="TAG",
                help="With --verify: compare with this anchor (vouch/audit/N), not the last.",
            ),
        ],
        _audit,
    ),
    "kb.audit_verify": Custom(run=_verified),
    "kb.lint": Custom(run=_checked),
    "kb.source_verify": Custom(run=_checked),
    "kb.doctor": Custom(run=_checked),
    "kb.export_check": Custom(run=_each_checked),
}
