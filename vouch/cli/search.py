"""`vouch eval` and `vouch stats`: search tools that are not registry methods.

(`vouch search`, `tags` and `info` are generated from the registry like every method.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from vouch.cli import cli
from vouch.cli.options import Output, kb_command, split_csv
from vouch.methods.context import CallContext


@cli.command("eval")
@click.argument("golden", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--corpus",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Evaluate on a temporary knowledge base built from the files in DIR (instead of --kb).",
)
@click.option(
    "--modes", default="fts,vector,hybrid", show_default=True, help="Search modes to compare."
)
@kb_command(default_format="human", writes_actor=False)
def eval_cmd(ctx: CallContext, out: Output, golden: Path, corpus: Path | None, modes: str) -> None:
    """Retrieval quality on GOLDEN.jsonl: MRR@10, recall@10, nDCG@10 per search mode."""
    from vouch.search import evalrun
    from vouch.search.eval import table

    report = evalrun.run(ctx, golden, corpus=corpus, modes=split_csv(modes))
    out.emit(report, table)


@cli.command("stats")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--gate",
    is_flag=True,
    help="whether review keeps up instead (`vouch gate-stats`; --format markdown: a weekly note)",
)
@kb_command(writes_actor=False)
def stats_cmd(ctx: CallContext, out: Output, top: int, gate: bool) -> None:
    """What people searched for: frequent queries, and queries that found nothing."""
    if gate:
        from vouch.cli.human_maintenance import gate_stats
        from vouch.methods import registry as ops

        gate_stats(out, ops.invoke(ctx, "kb.gate_stats", {}))
        return
    from vouch.search import log

    data = log.stats(ctx.kb.dir, top=top)

    def human(d: dict[str, Any]) -> str:
        lines = [
            f"Searches: {d['searches']} ({d['errors']} failed), "
            f"{d['distinct_queries']} distinct queries"
        ]
        lines.append("Most frequent:")
        lines += [
            f"  {q['count']:>5}  {q['query']}  (avg {q['avg_results']} results)"
            for q in d["top_queries"]
        ] or ["  (none)"]
        lines.append("Found nothing (what the knowledge base lacks):")
        lines += [f"  {q['count']:>5}  {q['query']}" for q in d["zero_result_queries"]] or [
            "  (none)"
        ]
        return "\n".join(lines)

    out.emit(data, human)
