"""`vouch demo`: build a small knowledge base in a temporary git repo and walk the loop."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import click

from vouch.cli import cli
from vouch.methods.demo import run_demo


@cli.command("demo")
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
@click.option(
    "--format", "fmt", type=click.Choice(["human", "json"]), default="human", show_default=True
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def demo_cmd(keep: bool, fmt: str, as_json: bool) -> None:
    """Build a knowledge base from the bundled examples and walk propose → approve → search."""
    as_json = as_json or fmt == "json"
    workdir = Path(tempfile.mkdtemp(prefix="vouch-demo-"))
    steps: list[str] = []
    try:
        for line in run_demo(workdir / "repo"):
            if as_json:
                steps.append(line)
            else:
                click.echo(line)
        kept = str(workdir / "repo") if keep else None
        if as_json:
            click.echo(json.dumps({"steps": steps, "repository": kept}, indent=2))
        elif kept:
            click.echo(f"\nThe demo repository is kept at {kept}")
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
