"""What redacting a source writes (`vouch redact <source-id>`, a change proposal): its
bytes go and its meta.yaml stays as a tombstone, so every citation of it still resolves
— to "redacted" (`vouch.kinds.source.is_redacted`).

- the content file goes (every name a content file may have);
- meta.yaml is written anew (a new file: its comments may hold the words) with the id,
  type, locator, hash, size, media type, scope, times and version links it had, and
  `redacted_at`; the title, tags and metadata go (a title is often the document's first
  line);
- each evidence object citing it loses its quote and its span's hash (the quote is the
  source's words; the hash confirms a guessed span). A quoting one's id was made from
  its quote, so it is replaced by the pointer without one, and what cited it (claims,
  relations) cites the new id — edited in the same decision, sealed like any edit.

Claims citing it keep their own words (they are the claims' text, not the source's):
`vouch impact` lists them for the reviewer, who redacts those too if they repeat it.
"""

from __future__ import annotations

from vouch.core import ids
from vouch.errors import CorruptFile, NotFound, ValidationFailed
from vouch.gate.change_files import Plan, edit, naming
from vouch.gate.edits import Approved, Branch
from vouch.git.history import grep_paths
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import source as source_kind
from vouch.kinds.base import Obj
from vouch.store.kb import KB

KEPT = (
    "id",
    "type",
    "locator",
    "hash",
    "immutable",
    "scope",
    "byte_size",
    "media_type",
    "created_at",
    "supersedes",
    "superseded_by",
)


def plan(kb: KB, branch: Branch, source_id: str, out: Plan) -> None:
    """The files a redaction of `source_id` writes on the branch's tip, into `out`."""
    meta_rel = source_kind.path_for(source_id)
    data = branch.blob(meta_rel)
    if data is None:
        raise NotFound(
            f"source {source_id} is not registered on {branch.name}",
            hint="`vouch list sources` names the registered sources",
        )
    text = data.decode("utf-8", "replace")
    meta = source_kind.load(text, where=f"{branch.name}:{kb.rel(meta_rel)}")
    again = source_kind.is_redacted(meta)  # what a merge brought back since, if anything
    if not again:
        kept = {k: meta[k] for k in KEPT if meta.get(k) is not None}
        kept["redacted_at"] = ids.now_iso()
        out.before[meta_rel] = data
        out.files[meta_rel] = source_kind.dump(source_kind.KIND.normalize(kept)).encode()
    folder = source_kind.directory_for(source_id)
    for name in sorted(source_kind.CONTENT_NAMES):
        held = branch.blob(f"{folder}/{name}")
        if held is not None:
            out.before[f"{folder}/{name}"] = held
            out.files[f"{folder}/{name}"] = None
    if not again:
        out.edited.append({"kind": "source", "id": source_id, "what": "redacted"})
    elif out.files:  # a content file a merge brought back beside the tombstone
        out.edited.append({"kind": "source", "id": source_id, "what": "content removed"})
    _evidence(kb, branch, source_id, out)
    if not out.files:
        raise ValidationFailed([f"source {source_id} is already redacted"], what="change")


def _evidence(kb: KB, branch: Branch, source_id: str, out: Plan) -> None:
    """Each evidence object pointing into the source loses what it held of its words: a
    quoting one is replaced by the same pointer without a quote (its id was made from the
    quote, so the id goes too, and every claim or relation citing it cites the new one);
    one without a quote loses its span's hash (which would confirm a guessed span)."""
    kind = evidence_kind.KIND
    renamed: dict[str, str] = {}
    for rel, obj, data in _citing(kb, branch, source_id):
        anchor = str(obj.get("locator") or "")
        anchored = anchor.startswith("#") and anchor != evidence_kind.REDACTED_ANCHOR
        if not obj.get("quote") and not anchored:
            if "hash" not in obj:
                continue  # nothing of the source's words
            bare = {k: v for k, v in obj.items() if k != "hash"}
            out.before[rel] = data
            out.files[rel] = kind.dump(kind.normalize(bare)).encode()
            out.edited.append(
                {"kind": "evidence", "id": str(obj["id"]), "what": "span hash removed"}
            )
            continue
        locator = evidence_kind.REDACTED_ANCHOR if anchored else obj["locator"]
        plain = kind.new(source_id=source_id, locator=locator, created_at=obj.get("created_at"))
        new_rel = kind.path_for(plain["id"])
        out.before[rel] = data
        out.files[rel] = None
        if branch.blob(new_rel) is None and new_rel not in out.files:
            out.files[new_rel] = kind.dump(plain).encode()
            out.made.append(str(plain["id"]))  # the approval's event names what it creates
        renamed[str(obj["id"])] = str(plain["id"])
        out.edited.append(
            {"kind": "evidence", "id": str(plain["id"]), "what": "in place of a quoting one"}
            if not anchored
            else {"kind": "evidence", "id": str(plain["id"]), "what": "in place of an anchored one"}
        )
    if not renamed:
        return
    lists: dict[str, tuple[Approved, dict[str, list[str]]]] = {}
    for citing, field_name, value in naming(kb, branch, sorted(renamed)):
        if not isinstance(value, list):
            continue
        entry = lists.setdefault(citing.id, (citing, {}))
        current = entry[1].get(field_name) or citing.ids_in(field_name) or []
        entry[1][field_name] = list(dict.fromkeys(renamed.get(v, v) for v in current))
    for oid in sorted(lists):
        citing, fields = lists[oid]
        edit(out, citing, dict(fields), "cites the evidence without the quote")
    out.unlinked = tuple(sorted(lists))


def _citing(kb: KB, branch: Branch, source_id: str) -> list[tuple[str, Obj, bytes]]:
    """(path, object, bytes) of each evidence object pointing into the source."""
    if branch.tip is None:
        return []
    kind = evidence_kind.KIND
    start = kb.rel(".") + "/"
    out = []
    for path in grep_paths(kb.repo, [source_id], [kb.rel(kind.directory) + "/"], rev=branch.tip):
        rel = path[len(start) :] if path.startswith(start) else path
        oid = rel.rsplit("/", 1)[-1].removesuffix(kind.ext)
        if not ids.is_object_id(oid) or rel != kind.path_for(oid):
            continue
        data = branch.blob(rel)
        if data is None:
            continue
        try:
            obj = kind.load(data.decode("utf-8"), where=f"{branch.name}:{path}")
        except (CorruptFile, UnicodeDecodeError):
            continue  # lint names it; it cannot be trusted to say what it cites
        if obj.get("source_id") == source_id:
            out.append((rel, obj, data))
    return out
