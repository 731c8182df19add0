"""A finding of lint, source verification or doctor, and a report of many.

An issue is `{id, kind, severity, message, path}`: the object (or commit) it is about,
a stable kind (`uncited`, `dangling`, `no-decision`, ...), `warn` or `error`, a sentence
for people, and the repository path of the file when there is one. Any error fails the
check (exit 1); warnings never do.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ERROR = "error"
WARN = "warn"
Issue = dict[str, Any]


def issue(
    kind: str, severity: str, message: str, *, id: str | None = None, path: str | None = None
) -> Issue:
    # one line: a parser's multi-line error would break a linter-style report
    return {
        "id": id,
        "kind": kind,
        "severity": severity,
        "message": " ".join(message.split()),
        "path": path,
    }


def error(kind: str, message: str, **where: str | None) -> Issue:
    return issue(kind, ERROR, message, **where)


def warn(kind: str, message: str, **where: str | None) -> Issue:
    return issue(kind, WARN, message, **where)


def ordered(issues: Iterable[Issue]) -> list[Issue]:
    """Errors first, then by path and id; exact duplicates once."""
    seen: set[tuple[Any, ...]] = set()
    out: list[Issue] = []
    for item in issues:
        key = (item["kind"], item["id"], item["path"], item["message"])
        if key not in seen:
            seen.add(key)
            out.append(item)
    out.sort(key=lambda i: (i["severity"] != ERROR, i["path"] or "", i["id"] or "", i["kind"]))
    return out


def verdict(issues: Iterable[Issue]) -> str:
    """ok, warnings or errors."""
    severities = {i["severity"] for i in issues}
    return "errors" if ERROR in severities else "warnings" if severities else "ok"


def counts(issues: Iterable[Issue]) -> dict[str, int]:
    found = list(issues)
    return {
        "errors": sum(1 for i in found if i["severity"] == ERROR),
        "warnings": sum(1 for i in found if i["severity"] != ERROR),
    }
