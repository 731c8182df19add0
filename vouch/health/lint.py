"""`kb.lint`: the knowledge files, their links and their provenance, in one report.

Three scopes, one set of rules:

- everything (`vouch lint`): every file under `.vouch/` in the work tree;
- a commit being made (`--staged`, the pre-commit hook): only the files the index
  changes against HEAD, what they link to, and what referred to the files it deletes —
  read from the index, so a hook costs a few git processes and the changed files, not
  the whole knowledge base;
- a range (`--since BASE`, CI on a pull request): the files BASE..HEAD changed, read
  from HEAD, plus the proof of review over each commit of the range (`review`), judged
  by the range's net change: what a commit did to a file the range leaves as it was
  (an edit and its revert) is not held against it.

In every scope an approved object must hold the bytes vouch's last write of it left
(`sealed`: the decision record and the lifecycle events name them); the hook refuses
a commit that edits or deletes one by hand (`provenance.staged`).

Every broken file is an issue with its path and reason, never an exception: lint is
what a person runs when something is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from vouch.core import ids
from vouch.core.config import Config
from vouch.core.progress import Progress, each
from vouch.gate.committed import settings_at
from vouch.health import (
    drift,
    files,
    leftovers,
    provenance,
    redactions,
    rules,
    sealed,
    tracked_state,
)
from vouch.health.file_versions import unverified_in_range
from vouch.health.issues import Issue, counts, ordered, verdict, warn
from vouch.kinds import KINDS
from vouch.store.kb import KB

if TYPE_CHECKING:
    from vouch.git.history import Change

DEFAULT_STALE_DAYS = 180
# where an id can be mentioned by another object: who refers to a deleted one
_REFERRING = ("claims", "pages", "relations", "evidence")


def settings_of(kb: KB) -> Config:
    """The committed configuration at HEAD (what the gate obeys), else the work tree's."""

    head = kb.repo.peek("HEAD")
    return settings_at(kb, head) if head else kb.config


MAX_STALE_DAYS = 36500


def stale_days_of(settings: Config, given: int | None) -> int:
    """`--stale-days`, else review.stale_days, else 180; 0 turns the check off."""
    if given is not None:
        return min(given, MAX_STALE_DAYS)  # a huge --stale-days is never, not an overflow
    value = settings.get("review.stale_days", DEFAULT_STALE_DAYS)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return DEFAULT_STALE_DAYS
    return min(value, MAX_STALE_DAYS)  # past a century is never (and past a date's range)


def lint(
    kb: KB,
    *,
    stale_days: int | None = None,
    staged: bool = False,
    since: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    if staged and since:
        from vouch.errors import UsageError

        raise UsageError(
            "--staged and --since exclude each other",
            hint="--staged checks a commit being made, --since a range of history",
        )
    if since:
        return _since(kb, since, stale_days)
    if staged:
        return _staged(kb, stale_days)
    return _everything(kb, stale_days, progress)


def report(mode: str, k: rules.Knowledge, issues: Iterable[Issue], **extra: Any) -> dict[str, Any]:
    found = ordered([*k.issues, *issues])
    objects = sum(
        1 for (kind, _), obj in k.objects.items() if obj is not None and kind != files.DECISION
    )
    return {
        "ok": verdict(found) != "errors",
        "verdict": verdict(found),
        "mode": mode,
        **counts(found),
        "checked": {"objects": objects},
        **extra,
        "issues": found,
    }


# -- everything ----------------------------------------------------------------------------
def everything(
    kb: KB,
    stale_days: int | None = None,
    progress: Progress | None = None,
    view: files.View | None = None,
) -> tuple[rules.Knowledge, list[Issue]]:
    """Every knowledge file of the work tree (or of `view`) loaded, and the issues
    beyond loading."""
    from vouch.health.cache import LoadCache

    settings = settings_of(kb)
    cache = LoadCache(kb)
    k = rules.Knowledge(view or files.work_tree(kb), cache)
    for entry in each(list(k.view.entries()), progress, "checking", every=200):
        k.load(entry)
    cache.save()
    require = settings.get("review.require_citations", True) is not False
    issues: list[Issue] = []
    claims: list[rules.Obj] = []
    records: list[rules.Obj] = []
    for (kind, _), obj in list(k.objects.items()):  # a check may look one more up
        if obj is None:
            continue
        if kind == files.DECISION:
            records.append(obj)
            continue
        issues += rules.check_object(k, kind, obj, require_citations=require)
        if kind == "claim":
            claims.append(obj)
    issues += rules.check_links(k, (str(c["id"]) for c in claims), complete=True)
    decided = redactions.redacting(records)
    loaded = [oid for (kind, oid), obj in list(k.objects.items()) if kind == "source" and obj]
    issues += redactions.check_sources(k, [*loaded, *decided], decided)
    days = stale_days_of(settings, stale_days)
    if days:
        issues += rules.stale(k, claims, days)
    issues += provenance.full(k, records, settings)
    issues += sealed.full(k, records)  # approved bytes that no vouch write left
    issues += superseded_citations(kb)
    issues += drift.issues(kb, drift.drifted(kb, claims))
    issues += tracked_state.tracked(kb)
    return k, issues


def _everything(kb: KB, stale_days: int | None, progress: Progress | None) -> dict[str, Any]:
    k, issues = everything(kb, stale_days, progress)
    return report("full", k, issues)


def superseded_citations(kb: KB) -> list[Issue]:
    """Live claims citing a source version that a newer version superseded
    (`vouch.store.versions.superseded_citations`): they need review against the current one."""
    from vouch.errors import VouchError
    from vouch.store.versions import superseded_citations as find

    try:
        found = find(kb)
    except VouchError as exc:  # a broken file on the way: lint reports it by its path
        return [
            warn(
                "superseded-citation",
                f"citations of superseded source versions were not checked: {exc.message}",
            )
        ]
    out: list[Issue] = []
    for row in found:
        claim, source = str(row["claim_id"]), str(row["source_id"])
        current = row.get("current_id")
        via = f" (through evidence {row['evidence_id']})" if row.get("evidence_id") else ""
        out.append(
            warn(
                "superseded-citation",
                f"cites source {source[:12]}…{via}, a version superseded "
                f"by {str(current)[:12]}…; review it against the current version",
                id=claim,
                path=kb.rel(KINDS["claim"].path_for(claim)) if ids.is_object_id(claim) else None,
            )
        )
    return out


# -- what changed ----------------------------------------------------------------------------
def _changed(
    k: rules.Knowledge,
    changes: list[Change],
    settings: Config,
    stale_days: int | None,
    grep: dict[str, Any],
) -> list[Issue]:
    """The rules for the changed files, the claims they link to, and the objects that
    referred to what they delete."""
    from vouch.git.history import grep_paths

    kb = k.view.kb
    require = settings.get("review.require_citations", True) is not False
    start = k.view.prefix
    present: list[files.Entry] = []
    deleted: list[str] = []
    linked: list[str] = []  # claims an old version linked to: their side may now be one-sided
    for change in changes:
        if not change.path.startswith(start):
            continue
        entry = files.catalog(change.path[len(start) :])
        if entry is None:
            continue
        if change.new is not None:
            present.append(entry)
        elif entry.id is not None and entry.part != "content":
            deleted.append(entry.id)
        if entry.kind == "claim" and change.old is not None:
            old = files.parse(None, kb.repo.read_blob(change.old), change.path).data or {}
            for field in ("contradicts", "supersedes"):
                items = old.get(field)
                linked += [str(i) for i in items] if isinstance(items, list) else []
            if isinstance(old.get("superseded_by"), str):
                linked.append(old["superseded_by"])
    sources = [e.id for e in present if e.kind == "source" and e.id is not None]
    sources += [e.id for e in present if e.kind == files.DECISION and e.id is not None]
    if deleted:
        for path in grep_paths(kb.repo, deleted, [kb.rel(d) for d in _REFERRING], **grep):
            entry = files.catalog(path[len(start) :]) if path.startswith(start) else None
            if entry is not None and entry.id not in deleted:
                present.append(entry)
    issues: list[Issue] = []
    claims: list[rules.Obj] = []
    for entry in present:
        obj = k.load(entry)
        if obj is None or entry.kind in (None, files.DECISION):
            continue
        issues += rules.check_object(k, str(entry.kind), obj, require_citations=require)
        if entry.kind == "claim":
            claims.append(obj)
    issues += _redactions(k, sources, grep)
    focus = [str(c["id"]) for c in claims] + linked
    issues += rules.check_links(k, focus, complete=False)
    days = stale_days_of(settings, stale_days)
    if days:
        issues += rules.stale(k, claims, days)
    return issues


def _redactions(k: rules.Knowledge, changed: list[str], grep: dict[str, Any]) -> list[Issue]:
    """A changed source's tombstone against the decisions (`vouch.health.redactions`);
    `changed`: the changed sources and decision records (a record naming a source)."""
    sids = [i for i in changed if ids.is_source_id(i)]
    for pid in (i for i in changed if ids.is_proposal_id(i)):
        record = k.get(files.DECISION, pid)
        if record is not None and ids.is_source_id(str(record.get("object_id"))):
            sids.append(str(record["object_id"]))
    if not sids:
        return []
    decided = redactions.decided_in(k, k.view.kb, sids, grep)
    return redactions.check_sources(k, sids, decided)


def _staged(kb: KB, stale_days: int | None) -> dict[str, Any]:
    from vouch.git.history import staged_changes

    changes = staged_changes(kb.repo, [kb.rel(".")])
    if not changes:
        # a commit that adds no knowledge (most commits of a code repository, each running
        # the pre-commit hook): nothing to check, and no listing of the whole index
        # (~0.2 s at 10k objects)
        return report("staged", rules.Knowledge(files.GitView(kb, {}, "index")), [], changed=0)
    settings = settings_of(kb)
    k = rules.Knowledge(files.staged(kb))
    issues = _changed(k, changes, settings, stale_days, {"cached": True})
    issues += provenance.staged(k, changes, settings)
    issues += provenance.audit_shrunk(k, changes)
    issues += tracked_state.tracked(kb) + leftovers.half_landing(kb)
    return report("staged", k, issues, changed=len(changes))


def _since(kb: KB, base: str, stale_days: int | None) -> dict[str, Any]:
    from vouch.git.history import tree_diff
    from vouch.health import attributes, auditlint, host_grants, review

    issues, info = review.since(kb, base)
    changes = tree_diff(kb.repo, info["merge_base"], info["head"], [kb.rel(".")])
    # judged by its net change: a file an edit and its revert leave as it was is fine
    net = {c.path for c in changes}
    issues = [i for i in issues if not i.get("path") or i["path"] in net]
    k = rules.Knowledge(files.at_commit(kb, info["head"]))
    settings = settings_at(kb, info["base"])
    issues += _changed(k, changes, settings, stale_days, {"rev": info["head"]})
    issues += unverified_in_range(kb, info["head"], changes)
    issues += drift.issues(kb, drift.touched(kb, info["merge_base"], info["head"]))
    issues += sealed.changed(k, (c.path for c in changes if c.new is not None))
    # what the range loses: knowledge, records or audit lines the base held (a merge
    # taking one side only — `-s ours`, a conflict resolved by deleting — passed before)
    issues += provenance.removed(k, changes, info["base"][:12])
    issues += provenance.audit_shrunk(k, changes)
    issues += attributes.converted(kb)  # the checked-out HEAD's .gitattributes
    issues += tracked_state.tracked(kb, info["head"])
    issues += auditlint.since(kb, info, settings)  # each audit event against its commit
    issues += host_grants.committed(kb, info["head"])  # agent hosts told to decide
    return report("since", k, issues, changed=len(changes), range=info)
