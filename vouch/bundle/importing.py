"""Importing a checked bundle: what it would do here, and doing it.

Each object of the bundle (a source is its meta.yaml and content; a decision record is
keyed by its proposal id; the audit log is not an object and stays out) is new here,
identical, or a conflict: the same id with other content. `import_apply` lands the new
objects — and, with `overwrite`, the conflicting ones — in one commit through
`writer.commit_direct` under the clone's write lock: journal-first, crash-safe, with one
`bundle.import` audit event naming the bundle's sha256 and the importer, and a
`Vouch-Bundle` trailer. Nothing new means no commit and no event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vouch.bundle import integrity
from vouch.bundle.archive import Bundle, first_problems, load
from vouch.bundle.layout import committed_files
from vouch.bundle.reading import Limits
from vouch.core import ids
from vouch.core.progress import Progress
from vouch.errors import Conflict, CorruptFile, UsageError, ValidationFailed
from vouch.gate import seals
from vouch.gate.changes import deleted_by_decisions, redacted_by_decisions
from vouch.health.files import catalog
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import source as source_kind
from vouch.store.kb import KB

ON_CONFLICT = ("skip", "overwrite", "fail")


@dataclass
class Plan:
    """What importing a bundle would do, object by object (keyed by id)."""

    new: dict[str, dict[str, bytes]] = field(default_factory=dict)
    conflict: dict[str, dict[str, bytes]] = field(default_factory=dict)
    identical: list[str] = field(default_factory=list)
    here: dict[str, str] = field(default_factory=dict)  # the commit's files: path -> blob

    def landing(self, overwrite: bool) -> dict[str, bytes]:
        """The files the import writes: the new objects' (and the conflicting ones' when
        it overwrites)."""
        taken = {**self.new, **(self.conflict if overwrite else {})}
        return {rel: data for _, group in sorted(taken.items()) for rel, data in group.items()}


def objects_of(files: Mapping[str, bytes]) -> dict[str, tuple[str, dict[str, bytes]]]:
    """object id -> (kind, its files): a source is its meta.yaml and content; a decision
    record is keyed by its proposal id. The audit log is not an object: it stays out."""
    out: dict[str, tuple[str, dict[str, bytes]]] = {}
    for rel, data in files.items():
        entry = catalog(rel)
        if entry is None or entry.kind is None or entry.id is None:
            continue
        out.setdefault(entry.id, (entry.kind, {}))[1][rel] = data
    return out


def plan(kb: KB, bundle: Bundle, commit: str | None) -> Plan:
    """Each object of the bundle against `commit`: new (no file of it there), identical
    (every file the same), or a conflict (the same id with other content)."""
    here, _ = committed_files(kb, commit) if commit else ({}, [])
    blob_id = kb.repo.blob_id
    out = Plan(here=here)
    # an object a person's approved deletion removed here is not new: importing an old
    # bundle must not bring it back unasked (it conflicts, as a different version would)
    deleted = deleted_by_decisions(kb)
    # nor are the bytes of a source a decision redacted here, or a quote of them
    objects = objects_of(bundle.files)
    redacted = _redacted(
        kb, here, {_source_of(kind, oid, files) for kind, oid, files in _each(objects)}
    )
    for oid, (kind, files) in sorted(objects.items()):
        present = [rel for rel in files if rel in here]
        unredacting = _source_of(kind, oid, files) in redacted and _words(kind, files)
        if (not present and oid in deleted) or unredacting:
            out.conflict[oid] = files
        elif not present:
            out.new[oid] = files
        elif all(here.get(rel) == blob_id(data) for rel, data in files.items()):
            out.identical.append(oid)
        else:
            out.conflict[oid] = files
    return out


def _broken(
    kb: KB, bundle: Bundle, found: Plan, commit: str | None, landing: dict[str, bytes]
) -> list[str]:
    """What lint would refuse after landing `landing` — a reference to nothing, a
    one-sided link, knowledge no approved decision names — or evidence that misquotes
    its source, or a record deciding a proposal of this repository (`integrity`)."""
    from vouch.gate.committed import settings_at

    settings = settings_at(kb, commit) if commit else kb.config
    return [
        *_unredacting(kb, found.here, landing),
        *integrity.problems(kb, found.here, landing, settings, bundle.parsed),
    ]


def _unredacting(kb: KB, here: Mapping[str, str], landing: Mapping[str, bytes]) -> list[str]:
    """The files of `landing` that would bring back what a redaction here removed (a
    source's bytes or meta, an evidence quote or span hash of one): a bundle never does,
    whichever `--on-conflict`."""
    objects = objects_of(landing)
    redacted = _redacted(kb, here, {_source_of(k, o, f) for k, o, f in _each(objects)})
    out = []
    for kind, oid, files in _each(objects):
        if kind == "source" and oid not in redacted and _tombstone(files):
            out.append(
                f"{source_kind.path_for(oid)}: the bundle redacted source {oid[:12]}…, "
                "and here it is not: an import does not redact — propose `vouch redact "
                f"{oid}` here for a person to decide, or import with --on-conflict skip"
            )
        elif _source_of(kind, oid, files) in redacted and _words(kind, files):
            out += [
                f"{rel}: source {_source_of(kind, oid, files)[:12]}… was redacted here by "
                "a decision; a bundle never brings its bytes back"
                for rel in sorted(files)
            ]
    return out


def _each(
    objects: Mapping[str, tuple[str, dict[str, bytes]]],
) -> list[tuple[str, str, dict[str, bytes]]]:
    return [(kind, oid, files) for oid, (kind, files) in sorted(objects.items())]


def _source_of(kind: str, oid: str, files: Mapping[str, bytes]) -> str:
    """The source a bundle's source or evidence object is, or points into ("" else)."""
    if kind == "source":
        return oid
    if kind != "evidence" or len(files) != 1:
        return ""
    data = next(iter(files.values()))
    try:
        found = evidence_kind.load(data.decode("utf-8"), where=oid)
    except (CorruptFile, UnicodeDecodeError):
        return ""  # the bundle check names it
    return str(found.get("source_id") or "")


def _tombstone(files: Mapping[str, bytes]) -> bool:
    return any(
        rel.endswith("/meta.yaml") and source_kind.is_tombstone(data) for rel, data in files.items()
    )


def _words(kind: str, files: Mapping[str, bytes]) -> bool:
    """Whether a source's or evidence's files hold anything of the source's words: any
    source file but a tombstone, evidence with a quote or a span's hash."""
    if kind == "source":
        return not all(
            rel.endswith("/meta.yaml") and source_kind.is_tombstone(data)
            for rel, data in files.items()
        )
    return any(b"quote:" in data or b"hash:" in data for data in files.values())


def _redacted(kb: KB, here: Mapping[str, str], sids: set[str]) -> set[str]:
    """Those of `sids` a decision redacted here: a tombstone in `here`, or an approved
    redaction the audit log names."""
    sids = {s for s in sids if ids.is_source_id(s)}
    if not sids:
        return set()
    decided = redacted_by_decisions(kb) & sids
    for sid in sids - decided:
        blob = here.get(source_kind.path_for(sid))
        if blob and source_kind.is_tombstone(kb.repo.read_blob(blob)):
            decided.add(sid)
    return decided


def _refusal(bundle: Bundle, broken: list[str], hint: str | None = None) -> ValidationFailed:
    error = ValidationFailed(
        first_problems(broken),
        what=f"bundle {bundle.path}: importing it here would leave broken knowledge "
        "(refused; nothing was written)",
    )
    error.hint = hint
    return error


def _overwrite_hint(bundle: Bundle, found: Plan) -> str:
    """Keeping our versions of the conflicting objects breaks the bundle's links, taking
    the bundle's does not (a clone holding an older copy of an object it changed)."""
    n = len(found.conflict)
    return (
        f"{_objects(n)} here with other content "
        f"({_listed(found.conflict)}); keeping ours (--on-conflict skip, the default) "
        f"would break the bundle's links to {'it' if n == 1 else 'them'} — `vouch "
        f"import-apply {bundle.path} --on-conflict overwrite` takes the bundle's versions"
    )


def _objects(n: int) -> str:
    return f"{n} object of the bundle exists" if n == 1 else f"{n} objects of the bundle exist"


def _listed(ids: Mapping[str, object]) -> str:
    shown = sorted(ids)
    return ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")


def import_check(kb: KB, path: Path, progress: Progress | None = None) -> dict[str, Any]:
    """What importing the bundle here would do: its new, conflicting and identical
    objects, and which `--on-conflict` of `import-apply` would land it
    (`on_conflict`: mode -> whether it lands; `refused`: mode -> the broken knowledge
    it would leave). A bundle no mode can land is refused (ValidationFailed)."""
    bundle = load(path, progress, Limits.of(kb.config))
    head = kb.repo.resolve("HEAD")
    found = plan(kb, bundle, head)
    skip = _broken(kb, bundle, found, head, found.landing(overwrite=False))
    overwrite = _broken(kb, bundle, found, head, found.landing(True)) if found.conflict else skip
    if skip and overwrite:
        raise _refusal(bundle, skip)
    refused = {mode: first_problems(p) for mode, p in (("skip", skip), ("overwrite", overwrite))}
    result: dict[str, Any] = {
        "ok": True,
        "path": str(path),
        "bundle": bundle.sha256,
        "source_commit": bundle.manifest.get("source_commit"),
        "new": sorted(found.new),
        "conflict": sorted(found.conflict),
        "identical": found.identical,
        "on_conflict": {
            "skip": not skip,
            "overwrite": not overwrite,
            "fail": not found.conflict,  # `fail` refuses any conflict
        },
        "refused": {mode: p for mode, p in refused.items() if p},
    }
    if skip:
        result["hint"] = _overwrite_hint(bundle, found)
    elif found.conflict:
        result["hint"] = (
            f"{_objects(len(found.conflict))} here with other content: "
            "`vouch import-apply` keeps ours (--on-conflict skip, the default), "
            "--on-conflict overwrite takes the bundle's"
            + (" (refused here: it would leave broken knowledge)" if overwrite else "")
            + ", --on-conflict fail refuses the import"
        )
    return result


def import_apply(
    kb: KB,
    actor: str,
    path: Path,
    on_conflict: str = "skip",
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Land the bundle's new objects (and, with `overwrite`, its conflicting ones) in one
    audited commit on the checked-out branch; `fail` refuses when anything conflicts."""
    from vouch.store import writer
    from vouch.store.recovery import gate_lock

    if on_conflict not in ON_CONFLICT:
        raise UsageError(f"on_conflict {on_conflict!r} is not one of: {', '.join(ON_CONFLICT)}")
    bundle = load(path, progress, Limits.of(kb.config))
    with gate_lock(kb):
        head = kb.repo.resolve("HEAD")
        found = plan(kb, bundle, head)
        if found.conflict and on_conflict == "fail":
            shown = sorted(found.conflict)
            raise Conflict(
                f"{len(shown)} object(s) of the bundle exist here with other content: "
                + ", ".join(shown[:10])
                + (", ..." if len(shown) > 10 else ""),
                hint="nothing was written; `vouch import-check` lists them, and "
                "--on-conflict skip or overwrite decides what happens to them",
            )
        overwrite = on_conflict == "overwrite"
        files = found.landing(overwrite)
        broken = _broken(kb, bundle, found, head, files)
        if broken:
            lands = (
                not overwrite
                and found.conflict
                and not _broken(kb, bundle, found, head, found.landing(True))
            )
            raise _refusal(bundle, broken, _overwrite_hint(bundle, found) if lands else None)
        taken = {**found.new, **(found.conflict if overwrite else {})}
        result = {
            "imported": len(found.new),
            "skipped": 0 if overwrite else len(found.conflict),
            "overwritten": len(found.conflict) if overwrite else 0,
            "identical": len(found.identical),
            "on_conflict": on_conflict,
            "bundle": bundle.sha256,
            "commit": None,
        }
        if not taken:
            return result  # nothing new: no commit, no event (re-importing changes nothing)
        data = {
            "bundle_sha256": bundle.sha256,
            "importer": actor,
            "source_commit": bundle.manifest.get("source_commit"),
            "content_sha256": bundle.manifest.get("content_sha256"),
            **{
                k: result[k]
                for k in ("imported", "skipped", "overwritten", "identical", "on_conflict")
            },
        }
        moved = seals.imported(kb, files, bundle.parsed)  # bytes lifecycle writes changed
        if moved:
            data[seals.FIELD] = moved
        result["commit"] = writer.commit_direct(
            kb,
            files,
            subject=f"vouch: import bundle {bundle.sha256[:12]} ({len(taken)} objects)",
            event="bundle.import",
            actor=actor,
            object_ids=sorted(taken),
            data=data,
            extra_trailers={"Vouch-Bundle": bundle.sha256},
            progress=progress,
        )
    return result
