"""`vouch demo`: build a small knowledge base in a temporary git repo and walk the loop."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import click

from vouch.cli import cli
from vouch.methods.demo import run_demo


@cli.command("demo")
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
def demo_cmd(keep: bool) -> None:
    """Build a knowledge base from the bundled examples and walk propose → approve → search."""
    workdir = Path(tempfile.mkdtemp(prefix="vouch-demo-"))
    try:
        for line in run_demo(workdir / "repo"):
            click.echo(line)
        if keep:
            click.echo(f"\nThe demo repository is kept at {workdir / 'repo'}")
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
