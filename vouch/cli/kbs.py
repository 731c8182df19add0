"""`vouch kb add|list|remove`: the user's registry of knowledge bases, searched together
by `vouch search --all` and `vouch context --all` (`vouch.store.kb_registry`).

A person's commands only: no registry method, so no agent transport can add, remove or
list a path (agents name registered bases in `kbs`, `vouch.search.across`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from vouch.cli import cli
from vouch.cli.options import Output, kb_command
from vouch.core.printable import escaped
from vouch.methods.context import CallContext
from vouch.store import kb_registry


@cli.group("kb")
def kb_group() -> None:
    """The knowledge bases `vouch search --all` searches together: a list of names and
    repository paths in your own config folder ($XDG_CONFIG_HOME/vouch/kbs.yaml),
    never in a repository."""


@kb_group.command("add")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", help="What to call it (default: the folder's name).")
@kb_command(writes_actor=False)
def add_cmd(ctx: CallContext, out: Output, path: Path, name: str | None) -> None:
    """Register the knowledge base at PATH (a repository where `vouch init` ran)."""
    entry = kb_registry.add(path, name)
    out.emit(
        {"added": entry._asdict(), "registry": str(kb_registry.registry_path())},
        lambda d: f"registered {d['added']['name']}: {escaped(d['added']['path'])}",
    )


@kb_group.command("list")
@kb_command(writes_actor=False)
def list_cmd(ctx: CallContext, out: Output) -> None:
    """The registered knowledge bases and what `vouch search --all` finds at each."""
    from vouch.search.bases import look, opened_all

    found = opened_all([look(e) for e in kb_registry.entries()], {})
    rows = [base.report() for base, _ in found]
    data = {"registry": str(kb_registry.registry_path()), "kbs": rows}
    out.emit(data, _table)


@kb_group.command("remove")
@click.argument("name")
@kb_command(writes_actor=False)
def remove_cmd(ctx: CallContext, out: Output, name: str) -> None:
    """Forget NAME (its repository is left as it is)."""
    entry = kb_registry.remove(name)
    out.emit({"removed": entry._asdict()}, lambda d: f"removed {d['removed']['name']}")


def _table(data: dict[str, Any]) -> str:
    if not data["kbs"]:
        return f"no knowledge bases registered ({data['registry']}); `vouch kb add PATH`"
    width = max(len(r["name"]) for r in data["kbs"])
    lines = []
    for row in data["kbs"]:
        state = "ok" if row["state"] == "fresh" else row["state"]
        line = f"{row['name']:<{width}}  {state:<10}  {escaped(row['path'])}"
        if row.get("detail") and row["state"] != "fresh":
            line += f"\n{'':<{width}}  {row['detail']}"
        lines.append(line)
    return "\n".join(lines)
