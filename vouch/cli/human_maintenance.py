"""How lint, source verification and doctor reports look to people (`--format human`).

One line per issue, linter style: `PATH: SEVERITY[KIND] MESSAGE` (the id when there is
no path), then a summary line with the verdict.
"""

from __future__ import annotations

from typing import Any

import click

from vouch.cli.oneline import escaped


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def issue_line(item: dict[str, Any]) -> str:
    where = item.get("path") or item.get("id") or "-"
    check = f" ({item['check']})" if item.get("check") else ""
    return escaped(f"{where}: {item['severity']}[{item['kind']}]{check} {item['message']}")


def _tally(report: dict[str, Any]) -> str:
    return f"{_plural(report['errors'], 'error')}, {_plural(report['warnings'], 'warning')}"


def lint(report: dict[str, Any]) -> str:
    lines = [issue_line(i) for i in report["issues"]]
    scope = {
        "full": "every knowledge file",
        "staged": "the staged changes",
        "since": "the changes since " + str((report.get("range") or {}).get("base", ""))[:12],
    }.get(report["mode"], report["mode"])
    extra = ""
    if report["mode"] == "since":
        info = report.get("range") or {}
        extra = (
            f", {_plural(info.get('commits', 0), 'commit')} "
            f"({_plural(info.get('decisions', 0), 'decision')})"
        )
    lines.append(
        f"vouch lint ({scope}): {_plural(report['checked']['objects'], 'object')}{extra}; "
        f"{_tally(report)} — {report['verdict']}"
    )
    return "\n".join(lines)


def source_verify(report: dict[str, Any]) -> str:
    lines = [
        escaped(f"{i.get('path') or i['id']}: error[{i['kind']}] {i['detail']}")
        for i in report["issues"]
    ]
    state = "ok" if report["ok"] else f"{_plural(len(report['issues']), 'problem')}"
    lines.append(f"{_plural(report['checked'], 'source')} verified — {state}")
    return "\n".join(lines)


def _index_detail(index: dict[str, Any]) -> str:
    """Why the index is not fresh, and what happens next (`the next search refreshes
    it; vouch index rebuild does it now`)."""
    said = [" ".join(str(index.get(k) or "").split()) for k in ("reason", "next")]
    return " — ".join(part for part in said if part)


def doctor(report: dict[str, Any]) -> str:
    checks = report["checks"]
    lint_ = checks["lint"]
    index = checks["index"]
    audit = checks["audit"]
    sources = checks["sources"]
    rows = [
        (
            "lint",
            lint_["verdict"],
            f"{_plural(lint_['objects'], 'object')}, "
            f"{_plural(lint_['errors'], 'error')}, "
            f"{_plural(lint_['warnings'], 'warning')}",
        ),
        (
            "sources",
            "ok" if sources["ok"] else "errors",
            f"{_plural(sources['checked'], 'source')} verified"
            + (f", {_plural(sources['issues'], 'problem')}" if sources["issues"] else ""),
        ),
        ("index", index["state"], _index_detail(index)),
        (
            "audit",
            "ok" if audit.get("ok") else "errors",
            f"{_plural(audit.get('events') or 0, 'event')} checked against git",
        ),
        ("config", checks["config"]["verdict"], ""),
    ]
    lines = [f"vouch doctor: {report['verdict']} ({_tally(report)})"]
    lines += [f"  {name:<8} {state:<9} {detail}".rstrip() for name, state, detail in rows]
    if report["issues"]:
        lines.append("")
        lines += [issue_line(i) for i in report["issues"]]
    return "\n".join(lines)


def gate_stats(out: Any, d: dict[str, Any]) -> None:
    """`vouch gate-stats` (`vouch stats --gate`): JSON in a pipe; `--format markdown`:
    the weekly note."""
    from vouch.core.printable import screen
    from vouch.health.gate_stats import human, markdown

    if out.json:
        out.emit(d)
    else:
        click.echo(screen(markdown(d) if out.format == "markdown" else human(d)), nl=False)
