"""How lifecycle results and source histories look to people (`--format human`)."""

from __future__ import annotations

from typing import Any

from vouch.cli.oneline import escaped


def changed(result: dict[str, Any]) -> str:
    """One line: what happened, and the commit; or that nothing needed to change."""
    if not result.get("changed"):
        return f"{result['message']}: nothing changed"
    return f"{result['message']} (commit {str(result['commit'])[:12]})"


def history(rows: list[dict[str, Any]]) -> str:
    """Newest first: `<id>  current|superseded by <id>  <created_at>  <bytes>  <title>`."""
    lines = []
    for row in rows:
        state = (
            "current"
            if row.get("current")
            else f"superseded by {str(row.get('superseded_by'))[:12]}"
        )
        lines.append(
            f"{row['id']}  {state:<26} {row.get('created_at') or '':<20} "
            f"{row.get('byte_size') or 0:>8} B  {escaped(str(row.get('title') or ''))}"
        )
    return "\n".join(lines) or "(none)"
