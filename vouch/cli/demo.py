"""`vouch demo`: build a small knowledge base in a temporary git repo and walk the loop."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import click

from vouch.cli import cli
from vouch.errors import UsageError
from vouch.methods.demo import run_demo


@cli.command("demo")
@click.option(
    "--path",
    "path",
    type=click.Path(file_okay=False, path_type=Path),
    help="Build the demo repository in DIR (new or empty) and keep it.",
    metavar="DIR",
)
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
@click.option(
    "--format", "fmt", type=click.Choice(["human", "json"]), default="human", show_default=True
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def demo_cmd(path: Path | None, keep: bool, fmt: str, as_json: bool) -> None:
    """Build a knowledge base from the bundled examples: propose, review, search, explain."""
    as_json = as_json or fmt == "json"
    if path is not None:
        path = path.resolve()
        if path.exists() and any(path.iterdir()):
            raise UsageError(
                f"{path} is not empty", hint="name a new or empty directory for the demo"
            )
        repo, workdir, keep = path, None, True
    else:
        workdir = Path(tempfile.mkdtemp(prefix="vouch-demo-"))
        repo = workdir / "repo"
    steps: list[str] = []
    try:
        for line in run_demo(repo):
            if as_json:
                steps.append(line)
            else:
                click.echo(line)
        kept = str(repo) if keep else None
        if as_json:
            click.echo(json.dumps({"steps": steps, "repository": kept}, indent=2))
        else:
            click.echo("\n" + _next_steps(kept))
    finally:
        if workdir is not None and not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def _next_steps(kept: str | None) -> str:
    """What to try next: in the kept repository, or in one's own."""
    if kept is None:
        return (
            "Try it on your own repository: `vouch init`, `vouch source add -r docs/`, "
            '`vouch search "..."`\n(`vouch demo --path DIR` keeps a demo repository '
            "to explore)."
        )
    return "\n".join(
        [
            f"The demo repository is kept at {kept}. Try, from there:",
            f"  cd {kept}",
            '  vouch search "roll back a release" --format human',
            "  vouch list claims; vouch show CLAIM_ID; vouch audit --tail 5",
            '  vouch context "fix the billing rollback"',
            "  git log --oneline --graph --all",
        ]
    )
