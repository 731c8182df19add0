"""How `vouch migrate plan` and `vouch migrate apply` look to people."""

from __future__ import annotations

from typing import Any

from vouch.cli.oneline import escaped

_CURRENT = "The knowledge is in schema version {}, this vouch's: nothing to migrate."


def plan(report: dict[str, Any]) -> str:
    if report["current"]:
        return _CURRENT.format(report["version"])
    lines = [
        f"Migrating schema version {report['version']} to {report['target']} would change "
        f"{report['files']} file(s) in one commit:"
    ]
    for step in report["steps"]:
        lines.append(f"  {step['from']} → {step['to']} {step['name']}: {escaped(step['summary'])}")
        lines += [f"      {f['change']:<6} {escaped(f['path'])}" for f in step["files"]]
    lines.append(f"  and {report['config']}: schema_version: {report['target']}")
    lines.append("Nothing was written; `vouch migrate apply` makes the commit.")
    return "\n".join(lines)


def applied(report: dict[str, Any]) -> str:
    if not report["applied"]:
        return _CURRENT.format(report["version"])
    return (
        f"Migrated schema version {report['version']} to {report['target']} in commit "
        f"{report['commit'][:12]} ({report['files']} file(s)); `git revert "
        f"{report['commit'][:12]}` rolls it back."
    )
