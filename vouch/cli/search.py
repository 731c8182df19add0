"""`vouch search`, `vouch eval`, `vouch stats`, `vouch tags`, `vouch info`.

Formatting only: each command calls one function of `vouch.search` (or the registry)
and prints. Heavy modules load inside the commands, so a cold `vouch search` imports
only what the query needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from vouch import ops
from vouch.callctx import CallContext
from vouch.cli import cli
from vouch.cli.options import Output, kb_command, split_csv
from vouch.errors import UsageError


@cli.command("search")
@click.argument("query")
@click.option("--fts-only", is_flag=True, help="Lexical (FTS5 BM25) channel only.")
@click.option("--vec-only", is_flag=True, help="Vector (embedding) channel only.")
@click.option("--kind", "kinds", metavar="K,K", help="claim, page, entity, relation, source.")
@click.option("--tags", metavar="T,T", help="Only documents carrying every one of these tags.")
@click.option("--type", "types", metavar="T,T", help="Claim/page/source type(s).")
@click.option("--status", "statuses", metavar="S,S",
              help="Only these statuses (archived, superseded, redacted show only when asked).")
@click.option("--threshold", type=float, help="Drop results scoring below this (RRF score).")
@click.option("--top", type=click.IntRange(min=1), help="Results per page (search.default_top).")
@click.option("--rrf-k", type=click.FloatRange(min=0), help="RRF k (search.rrf_k, default 60); "
              "fuses the channels with equal weights.")
@click.option("--cursor", help="Continue from a previous response's next_cursor.")
@click.option("--max-tokens", type=click.IntRange(min=1),
              help="Token budget for the results (chars/4); sets truncated.")
@click.option("--trace", is_flag=True, help="Add channel lists, RRF inputs and timings.")
@click.option("--include-pending", is_flag=True, help="Also search open proposals.")
@kb_command(default_format="json", writes_actor=False)
def search_cmd(ctx: CallContext, out: Output, query: str, fts_only: bool, vec_only: bool,
               kinds: str | None, tags: str | None, types: str | None, statuses: str | None,
               threshold: float | None, top: int | None, rrf_k: float | None,
               cursor: str | None, max_tokens: int | None, trace: bool,
               include_pending: bool) -> None:
    """Search approved knowledge and sources: hybrid BM25 + vectors, fused by RRF."""
    from vouch.search import engine
    from vouch.search.api import request_from_params

    if fts_only and vec_only:
        raise UsageError("--fts-only and --vec-only exclude each other")
    request = request_from_params(
        query, limit=top, kinds=split_csv(kinds), mode="fts" if fts_only else
        "vector" if vec_only else "hybrid", tags=split_csv(tags), types=split_csv(types),
        statuses=split_csv(statuses), threshold=threshold, rrf_k=rrf_k, cursor=cursor,
        max_tokens=max_tokens, trace=trace, include_pending=include_pending,
    )
    if rrf_k is not None:
        # an explicit k asks for textbook RRF: equal channel weights (spec's worked example)
        from dataclasses import replace

        request = replace(request, weights={})
    response = engine.search(ctx.kb, request, warm=ctx.warm)

    def human(data: dict[str, Any]) -> str:
        from vouch.search.human import render

        return render(data)

    out.emit(response, human)


@cli.command("eval")
@click.argument("golden", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--corpus", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Evaluate on a temporary knowledge base built from the files in DIR "
                   "(instead of --kb).")
@click.option("--modes", default="fts,vector,hybrid", show_default=True,
              help="Search modes to compare.")
@kb_command(default_format="human", writes_actor=False)
def eval_cmd(ctx: CallContext, out: Output, golden: Path, corpus: Path | None,
             modes: str) -> None:
    """Retrieval quality on GOLDEN.jsonl: MRR@10, recall@10, nDCG@10 per search mode."""
    from vouch.search import evalrun
    from vouch.search.eval import table

    report = evalrun.run(ctx, golden, corpus=corpus, modes=split_csv(modes))
    out.emit(report, table)


@cli.command("stats")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True)
@kb_command(writes_actor=False)
def stats_cmd(ctx: CallContext, out: Output, top: int) -> None:
    """What people searched for: frequent queries, and queries that found nothing."""
    from vouch.search import log

    data = log.stats(ctx.kb.dir, top=top)

    def human(d: dict[str, Any]) -> str:
        lines = [f"Searches: {d['searches']} ({d['errors']} failed), "
                 f"{d['distinct_queries']} distinct queries"]
        lines.append("Most frequent:")
        lines += [f"  {q['count']:>5}  {q['query']}  (avg {q['avg_results']} results)"
                  for q in d["top_queries"]] or ["  (none)"]
        lines.append("Found nothing (what the knowledge base lacks):")
        lines += [f"  {q['count']:>5}  {q['query']}" for q in d["zero_result_queries"]] \
            or ["  (none)"]
        return "\n".join(lines)

    out.emit(data, human)


@cli.command("tags")
@kb_command(writes_actor=False)
def tags_cmd(ctx: CallContext, out: Output) -> None:
    """Every tag with the number of objects carrying it."""
    data = ops.invoke(ctx, "kb.tags")
    out.emit(data, lambda rows: "\n".join(f"{r['count']:>6}  {r['name']}" for r in rows)
             or "(no tags)")


@cli.command("info")
@click.argument("object_id", metavar="ID")
@kb_command(writes_actor=False)
def info_cmd(ctx: CallContext, out: Output, object_id: str) -> None:
    """What the index holds for one object: chunks, sections, tags."""
    data = ops.invoke(ctx, "kb.info", {"id": object_id})

    def human(d: dict[str, Any]) -> str:
        lines = [f"{d['kind']} {d['id']}", f"  title:   {d['title']}",
                 f"  type:    {d['type'] or '-'}", f"  status:  {d['status'] or '-'}",
                 f"  tags:    {', '.join(d['tags']) or '-'}", f"  path:    {d['path']}",
                 f"  chunks:  {d['chunk_count']}"]
        lines += [f"  §{h['text']} (level {h['level']}, lines {h['start_line']}-"
                  f"{h['end_line'] - 1})" for h in d.get("headings") or ()]
        return "\n".join(lines)

    out.emit(data, human)
