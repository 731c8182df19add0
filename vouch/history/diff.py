"""`vouch diff A..B`: what a branch changes in what the team believes.

One `git diff-tree` between the two commits lists the knowledge files that differ; each
is read at both ends (through the long-lived cat-file) and compared as knowledge:
claims added, removed, superseded, archived, with their status or confidence changed;
pages added, removed or edited by section; entities and relations added, removed or
edited; sources and evidence registered; proposals decided; and, when B is the
checked-out commit, the approved claims whose cited lines the range's file changes
moved, changed or deleted (`drifted`). `A..B` compares the two
commits; `A...B` compares B with where it left A (their merge base), as a pull request
does; a lone `A` means `A..HEAD`.
"""

from __future__ import annotations

import contextlib
from typing import Any

from vouch.core import yamlio
from vouch.errors import CorruptFile, UsageError
from vouch.git import history
from vouch.health.files import DECISION, catalog
from vouch.kinds import KINDS, Obj, page
from vouch.store.kb import KB

_GATED_PLURAL = {"claim": "claims", "page": "pages", "entity": "entities", "relation": "relations"}
_CLAIM_BUCKETS = (
    "added",
    "removed",
    "superseded",
    "archived",
    "status_changed",
    "confidence_changed",
    "edited",
)
_IGNORED = ("updated_at",)


def resolve_range(kb: KB, spec: str) -> tuple[str, str, str | None]:
    """(from commit, to commit, merge base when `...`) of `A..B`, `A...B` or `A`."""
    repo = kb.repo
    three = "..." in spec
    left, _, right = spec.partition("..." if three else "..")
    if not _ and not three:
        left, right = spec, "HEAD"
    left, right = left or "HEAD", right or "HEAD"
    a, b = repo.resolve(left), repo.resolve(right)
    for name, sha in ((left, a), (right, b)):
        if sha is None:
            raise UsageError(
                f"{name!r} is not a commit here", hint="name branches, tags or commits: A..B"
            )
    assert a is not None and b is not None
    if not three:
        return a, b, None
    base = history.merge_base(repo, a, b)
    if base is None:
        raise UsageError(f"{left} and {right} share no history", hint="compare them with A..B")
    return base, b, base


def diff(kb: KB, spec: str, *, graph: bool = False) -> dict[str, Any]:
    old, new, base = resolve_range(kb, spec)
    prefix = kb.rel(".") + "/"
    out: dict[str, Any] = {
        "range": spec,
        "from": old,
        "to": new,
        "merge_base": base,
        "claims": {b: [] for b in _CLAIM_BUCKETS},
        "pages": {"added": [], "removed": [], "edited": []},
        "entities": {"added": [], "removed": [], "edited": []},
        "relations": {"added": [], "removed": [], "edited": []},
        "sources": {"added": [], "removed": []},
        "evidence": {"added": 0, "removed": 0},
        "decisions": [],
    }
    repo = kb.repo
    for change in history.tree_diff(repo, old, new, [prefix]):
        entry = catalog(change.path[len(prefix) :])
        if entry is None or entry.kind is None or entry.id is None:
            continue
        before = _load(kb, entry.kind, change.old, change.path)
        after = _load(kb, entry.kind, change.new, change.path)
        if entry.kind in _GATED_PLURAL:
            _object(out, entry.kind, entry.id, before, after)
        elif entry.kind == "source" and entry.part == "meta":
            if before is None or after is None:
                item = after or before or {}
                out["sources"]["added" if after else "removed"].append(
                    {"id": entry.id, "title": item.get("title") or item.get("locator")}
                )
        elif entry.kind == "evidence" and (before is None) != (after is None):
            out["evidence"]["added" if after else "removed"] += 1
        elif entry.kind == DECISION and after is not None and before is None:
            keep = ("proposal_id", "decision", "kind", "object_id", "proposer", "decided_by")
            out["decisions"].append({k: after.get(k) for k in keep})
    for group in ("claims", "pages", "entities", "relations", "sources"):
        for items in out[group].values():
            items.sort(key=lambda i: str(i.get("id")))
    out["decisions"].sort(key=lambda d: str(d.get("proposal_id")))
    out["drifted"] = _drifted(kb, old, new)
    out["summary"] = summary(out)
    if graph:  # what the range adds or changes, with its neighbours (`history.graph`)
        from vouch.history.graph import changes

        out["graph"] = changes(kb, new, changed_ids(out))
    return out


def changed_ids(d: dict[str, Any]) -> list[tuple[str, str]]:
    """(id, kind) of the claims, pages, entities and relations the range adds or changes."""
    return [
        (str(item["id"]), kind)
        for kind, group in _GATED_PLURAL.items()
        for bucket, items in d[group].items()
        if bucket != "removed"
        for item in items
    ]


def _drifted(kb: KB, old: str, new: str) -> list[dict[str, Any]]:
    """The approved claims whose cited lines the range's file changes moved, changed or
    deleted (`health.drift.touched`), when `new` is the checked-out commit (a pull
    request in CI): the files are read from the work tree."""
    from vouch.health import drift

    if new != kb.repo.resolve("HEAD"):
        return []
    return [d._asdict() for d in drift.touched(kb, old, new)]


def summary(d: dict[str, Any]) -> dict[str, int]:
    counts = {
        f"{group}_{bucket}": len(items)
        for group in ("claims", "pages", "entities", "relations", "sources")
        for bucket, items in d[group].items()
    }
    counts["evidence_added"] = d["evidence"]["added"]
    counts["decisions"] = len(d["decisions"])
    counts["claims_drifted"] = len({x["claim_id"] for x in d.get("drifted") or ()})
    return {k: v for k, v in counts.items() if v}


def _load(kb: KB, kind: str, blob: str | None, where: str) -> Obj | None:
    if blob is None:
        return None
    data = kb.repo.read_blob(blob)
    with contextlib.suppress(CorruptFile, UnicodeDecodeError):
        if kind == DECISION:
            loaded = yamlio.load_yaml(data.decode("utf-8"), where=where)
            return loaded if isinstance(loaded, dict) else None
        return KINDS[kind].load(data.decode("utf-8"), where=where)
    return None


def _brief(kind: str, object_id: str, obj: Obj) -> dict[str, Any]:
    out: dict[str, Any] = {"id": object_id, "title": KINDS[kind].title_of(obj)}
    for key in ("type", "status", "confidence", "relation", "source", "target"):
        if obj.get(key) is not None:
            out[key] = obj[key]
    return out


def _object(
    out: dict[str, Any], kind: str, oid: str, before: Obj | None, after: Obj | None
) -> None:
    group = out[_GATED_PLURAL[kind]]
    if before is None and after is None:
        return
    if before is None:
        assert after is not None
        group["added"].append(_brief(kind, oid, after))
        return
    if after is None:
        group["removed"].append(_brief(kind, oid, before))
        return
    fields = {
        k: {"from": before.get(k), "to": after.get(k)}
        for k in sorted(set(before) | set(after))
        if before.get(k) != after.get(k) and k not in _IGNORED and k != "body"
    }
    item = {**_brief(kind, oid, after), "fields": fields}
    if kind == "page":
        sections = section_changes(str(before.get("body") or ""), str(after.get("body") or ""))
        if sections:
            item["sections"] = sections
    if not fields and "sections" not in item:
        return
    if kind != "claim":
        group["edited"].append(item)
        return
    status = fields.get("status")
    placed = False
    if status is not None:
        bucket = {"superseded": "superseded", "archived": "archived"}.get(
            str(status["to"]), "status_changed"
        )
        if bucket == "superseded":
            item["superseded_by"] = after.get("superseded_by")
        group[bucket].append(item)
        placed = True
    if "confidence" in fields:
        group["confidence_changed"].append(item)
        placed = True
    if not placed:
        group["edited"].append(item)


def section_changes(old: str, new: str) -> dict[str, list[str]]:
    """Headings of the sections added, removed or edited between two page bodies."""
    before = {s.heading: s.text for s in page.sections(old)}
    after = {s.heading: s.text for s in page.sections(new)}
    found = {
        "added": [h for h in after if h not in before],
        "removed": [h for h in before if h not in after],
        "edited": [h for h in after if h in before and before[h] != after[h]],
    }
    return {k: v for k, v in found.items() if v}
