"""`vouch migrate plan`: what upgrading the committed knowledge to this vouch's schema
version would change, step by step, file by file; nothing is written.

The plan is computed from the commit HEAD names (what `apply` would build on), never
from the work tree. Each step's changes are checked before they are shown: a path
outside the folders the step declared, or one that is not a plain path inside
`.vouch/`, is the step's bug and stops the plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vouch.core.config import CONFIG_NAME
from vouch.migrate import configtext
from vouch.migrate.steps import Changes, Files, Step, chain
from vouch.store import schema
from vouch.store.kb import KB


@dataclass(frozen=True)
class Plan:
    head: str | None
    version: int  # the committed version
    target: int  # this vouch's
    steps: list[dict[str, Any]] = field(default_factory=list)
    changes: Changes = field(default_factory=dict)  # `.vouch/`-relative, all steps

    @property
    def touches(self) -> tuple[str, ...]:
        return tuple(sorted({t for s in self.steps for t in s["touches"]}))

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "target": self.target,
            "current": self.version == self.target,
            "steps": self.steps,
            "files": len(self.changes),
        }


def committed_version(kb: KB, head: str | None) -> tuple[int, str | None]:
    """The version config.yaml declares in `head`, and its text (None: no file)."""
    blob = kb.repo.blob_at(head, kb.rel(CONFIG_NAME)) if head else None
    text = kb.repo.read_blob(blob).decode("utf-8") if blob else None
    return schema.version_in(text, f"{kb.dir.name}/{CONFIG_NAME} at HEAD"), text


def plan_at(kb: KB, head: str | None, target: int | None = None) -> Plan:
    """The plan from the version committed in `head` to `target` (this vouch's)."""
    version, text = committed_version(kb, head)
    target = schema.current() if target is None else target
    todo = chain(version, target)
    files = Files(kb, head)
    shown: list[dict[str, Any]] = []
    for step in todo:
        made = step.change(files)
        _check(step, made)  # before a path is read: it may lead anywhere
        made = {p: b for p, b in made.items() if files.read(p) != b}
        shown.append(
            {
                "from": step.source,
                "to": step.source + 1,
                "name": step.name,
                "summary": step.summary,
                "touches": list(step.touches),
                "files": [
                    {"path": kb.rel(p), "change": _verb(files.read(p), b)}
                    for p, b in sorted(made.items())
                ],
            }
        )
        files.lay(made)
    changes = files.laid()
    if todo:
        new_config = configtext.with_version(text or "", target, f"{kb.dir.name}/{CONFIG_NAME}")
        changes[CONFIG_NAME] = new_config.encode("utf-8")
    return Plan(head, version, target, shown, changes)


def plan(kb: KB) -> dict[str, Any]:
    p = plan_at(kb, kb.repo.peek("HEAD"))
    return {**p.to_json(), "config": kb.rel(CONFIG_NAME)}


def _verb(before: bytes | None, after: bytes | None) -> str:
    if after is None:
        return "delete"
    return "add" if before is None else "edit"


def _check(step: Step, made: Changes) -> None:
    for path in made:
        parts = path.split("/")
        plain = path and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)
        inside = any(path.startswith(t.rstrip("/") + "/") for t in step.touches)
        if not plain or not inside or parts[0].lower() == ".git" or path == CONFIG_NAME:
            raise AssertionError(
                f"migration step {step.name} changes {path!r}, outside {step.touches}"
            )


def unlike(kb: KB, commit: str, parent: str, own: dict[str, str | None]) -> str | None:
    """Why the migration commit `commit` (on `parent`; `own`: `.vouch/`-relative path
    -> blob it changed) is not exactly what this vouch's steps make from its parent,
    or None when it is. The audit files are the writer's, checked by the audit proof."""
    from vouch.errors import VouchError
    from vouch.store import audit

    repo = kb.repo
    try:
        made, _ = committed_version(kb, commit)
        expected = plan_at(kb, parent, made)
    except (VouchError, AssertionError) as exc:
        return f"its schema version cannot be recomputed here ({exc}); upgrade vouch to check it"
    if not expected.steps:
        return f"it leaves the schema version at {made}"
    want = {p: (repo.blob_id(b) if b is not None else None) for p, b in expected.changes.items()}
    logs = (audit.LOG_NAME, audit.SEGMENT_DIR + "/")
    have = {p: b for p, b in own.items() if p != logs[0] and not p.startswith(logs[1])}
    if have != want:
        odd = sorted(set(have.items()) ^ set(want.items()))
        return (
            f"its changes are not what migrating {expected.version} -> {made} makes "
            f"(e.g. {odd[0][0]})"
        )
    return None
