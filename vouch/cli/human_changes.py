"""Human output of the change proposals (`vouch redact`, `vouch delete`, `vouch
propose-change`, `vouch source refresh`)."""

from __future__ import annotations

from typing import Any

import click

from vouch.core.printable import escaped


def proposed(out: Any, result: dict[str, Any]) -> None:
    """The proposal id alone on stdout (as `propose-*` prints it); what it would change
    and how it is decided on stderr."""
    if out.json:
        out.emit(result)
        return
    change = result.get("change") or {}
    pid = result.get("proposal_id")
    what = escaped(f"{change.get('op')} {change.get('target')}")
    click.echo(pid)
    if result.get("duplicate") == "pending":
        out.info(f"already proposed: {what}")
        return
    out.info(f"proposed: {what}")
    for t in result.get("touches") or []:
        out.info(f"  {t['kind']} {t['id']}: {escaped(t['what'])}")
    out.info(f"a person decides it: vouch show {pid}, then vouch approve or vouch reject")


def refreshed(result: dict[str, Any]) -> str:
    """One line per new version and per proposal opened (or already open)."""
    if not result.get("drifted"):
        return "no cited lines drifted: nothing to refresh"
    lines = []
    for r in result.get("registered") or []:
        got = r.get("source_id") or f"not registered: {r.get('error')}"
        lines.append(f"new version of {escaped(r['path'])}: {str(got)[:12]}")
    for p in result.get("proposals") or []:
        where = escaped(f"{p['path']} {p.get('locator') or ''}".strip())
        if p.get("error"):
            lines.append(f"{p['claim_id']}: {p['state']} ({where}): {escaped(p['error'])}")
            continue
        note = " (already proposed)" if p.get("duplicate") else ""
        lines.append(f"{p['proposal_id']}  {p['op']} {p['claim_id']}: {p['state']} ({where}){note}")
    lines.append("a person decides each: vouch show PROPOSAL_ID, then vouch approve / reject")
    return "\n".join(lines)
