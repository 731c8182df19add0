"""How bundle exports, checks and imports look to people (`--format human`)."""

from __future__ import annotations

from typing import Any

from vouch.cli.oneline import escaped

_LISTED = 20  # conflicting ids printed before "... and N more"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def exported(result: dict[str, Any]) -> str:
    lines = [
        f"left out {escaped(rel)}: not a knowledge file (vouch ignores it)"
        for rel in result.get("ignored") or ()
    ]
    lines.append(
        f"wrote {result['path']}: {_plural(result['files'], 'file')}, "
        f"{result['bytes']:,} bytes, from commit {result['source_commit'][:12]}"
    )
    lines.append(f"sha256 {result['sha256']}")
    return "\n".join(lines)


def checked(report: dict[str, Any]) -> str:
    where = report["path"]
    if report["ok"]:
        manifest = report.get("manifest") or {}
        return (
            f"{where}: ok — {_plural(report['files'], 'file')} match the manifest, "
            f"every knowledge file valid (commit {str(manifest.get('source_commit'))[:12]}"
            f", vouch {manifest.get('vouch_version')}, sha256 {report['sha256'][:16]}…)"
        )
    lines = [f"{where}: {escaped(issue)}" for issue in report["issues"]]
    lines.append(f"{where}: REFUSED — {_plural(len(report['issues']), 'problem')}")
    return "\n".join(lines)


def import_plan(result: dict[str, Any]) -> str:
    conflicts = result["conflict"]
    lines = [f"conflict: {oid}" for oid in conflicts[:_LISTED]]
    if len(conflicts) > _LISTED:
        lines.append(f"... and {len(conflicts) - _LISTED:,} more conflicts (--json lists them)")
    lines.append(
        f"{result['path']} (sha256 {result['bundle'][:16]}…): "
        f"{len(result['new']):,} new, {len(conflicts):,} conflicting, "
        f"{len(result['identical']):,} identical"
    )
    for mode, problems in (result.get("refused") or {}).items():
        shown = "; ".join(escaped(p) for p in problems)
        lines.append(f"--on-conflict {mode} would be refused (broken knowledge): {shown}")
    if result.get("hint"):
        lines.append(f"hint: {escaped(result['hint'])}")
    return "\n".join(lines)


def imported(result: dict[str, Any]) -> str:
    where = f"commit {result['commit'][:12]}" if result["commit"] else "nothing to commit"
    return (
        f"imported {result['imported']:,}, overwritten {result['overwritten']:,}, "
        f"skipped {result['skipped']:,}, identical {result['identical']:,} — {where} "
        f"(bundle sha256 {result['bundle'][:16]}…)"
    )
