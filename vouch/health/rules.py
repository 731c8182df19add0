"""The rules lint applies to knowledge files and to the links between them.

`Knowledge` loads objects from a `View` on demand (all of them for a full lint, the
changed ones and their neighbours for a hook) and keeps the issues each file earned:
unparseable, schema, a path or id that is not its content address. `check_object`
adds the references (uncited claims, dangling ids) and `check_links` the rules between
claims (supersede cycles, one-sided contradictions and supersessions); `stale`
the claims nobody confirmed for a while.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from vouch.core import ids
from vouch.health.files import DECISION, Entry, View, catalog, parse
from vouch.health.issues import ERROR, WARN, Issue, error, issue, warn
from vouch.kinds import KINDS
from vouch.kinds import source as source_kind
from vouch.kinds.claim import HIDDEN_STATUSES
from vouch.kinds.evidence import REDACTED_ANCHOR

if TYPE_CHECKING:
    from vouch.health.cache import LoadCache

Obj = dict[str, Any]
# kinds a relation endpoint may be
ENDPOINT_KINDS = ("claim", "entity", "page", "relation", "evidence", "session", "source")
DECISION_FIELDS = ("proposal_id", "decision", "kind", "object_id", "proposer", "decided_by")
_LINK_LIMIT = 500  # claims a changed-only lint follows along supersede links


class Knowledge:
    """Objects of one view, loaded once each, with the issues their files earned."""

    def __init__(self, view: View, cache: LoadCache | None = None):
        self.view = view
        self.cache = cache
        self.objects: dict[tuple[str, str], Obj | None] = {}  # (kind, id) -> valid object
        self.rels: dict[tuple[str, str], str] = {}  # (kind, id) -> its file, once loaded
        self.issues: list[Issue] = []

    def path(self, rel: str) -> str:
        return self.view.repo_path(rel)

    def load(self, entry: Entry) -> Obj | None:
        """The valid object at `entry` (None when it is not one: the reason is an issue)."""
        if entry.kind is None or entry.id is None:
            self.issues.append(
                warn(
                    "stray",
                    f"not a knowledge file, vouch ignores it: {entry.problem}",
                    path=self.path(entry.rel),
                )
            )
            return None
        if entry.kind == "source" and entry.part == "content":
            if f"{entry.rel.rsplit('/', 1)[0]}/meta.yaml" not in self.view.listing:
                self.issues.append(
                    error(
                        "schema",
                        "source content without its meta.yaml",
                        id=entry.id,
                        path=self.path(entry.rel),
                    )
                )
            return None
        key = (entry.kind, entry.id)
        if key in self.objects:
            return self.objects[key]
        self.rels[key] = entry.rel
        obj = self._load(entry)
        self.objects[key] = obj
        return obj

    def get(self, kind: str, object_id: str) -> Obj | None:
        """The valid object of `kind` with this id in the view, loading it if needed."""
        key = (kind, object_id)
        if key not in self.objects:
            rel = _rel_for(kind, object_id)
            entry = catalog(rel) if rel and rel in self.view.listing else None
            if entry is None:
                self.objects[key] = None
                return None
            return self.load(entry)
        return self.objects[key]

    def _load(self, entry: Entry) -> Obj | None:
        assert entry.kind is not None and entry.id is not None
        where = self.path(entry.rel)
        if entry.problem is not None:
            self.issues.append(error("misplaced", entry.problem, id=entry.id, path=where))
            return None
        raw = self.view.read(entry.rel)
        found = self.cache.get(entry.rel, raw) if self.cache is not None and raw else None
        if found is None:
            found = examine(entry.kind, raw, where)
            if self.cache is not None and raw:
                self.cache.put(entry.rel, raw, found)
        if found[0] != "ok":
            self.issues.append(error(found[0], found[1], id=entry.id, path=where))
            return None
        data, made = found[1], found[2]
        problem = None
        if entry.kind == "source":
            if data["id"] != entry.id or data["hash"] != f"sha256:{entry.id}":
                problem = (
                    f"meta.yaml names id {data['id']!r} and hash {data['hash']!r}; "
                    f"its directory names {entry.id}"
                )
            folder = entry.rel.removesuffix("meta.yaml")
            content = folder + source_kind.CONTENT
            held = [
                folder + n
                for n in sorted(source_kind.CONTENT_NAMES)
                if folder + n in self.view.listing
            ]
            if source_kind.is_redacted(data):  # a tombstone: its bytes must stay gone
                for rel in held:
                    self.issues.append(
                        error(
                            "redacted-content",
                            "the source was redacted, yet a content file is back: "
                            "delete it (`git rm`) and commit",
                            id=entry.id,
                            path=self.path(rel),
                        )
                    )
            elif not held:
                self.issues.append(
                    error(
                        "missing-content",
                        "the source's content file is missing",
                        id=entry.id,
                        path=self.path(content),
                    )
                )
        elif entry.kind == DECISION:
            if data["proposal_id"] != entry.id:
                self.issues.append(
                    error(
                        "schema",
                        f"not a valid decision record: proposal_id "
                        f"{data['proposal_id']!r} is not its file name",
                        id=entry.id,
                        path=where,
                    )
                )
                return None
        elif data["id"] != entry.id:
            self.issues.append(
                error(
                    "id-mismatch",
                    f"holds id {data['id']!r} but its path names {entry.id}",
                    id=entry.id,
                    path=where,
                )
            )
            return None
        elif made != entry.id:
            problem = (
                f"its content hashes to {made}, not {entry.id}: the file was edited "
                "by hand after it was made"
            )
        if problem:
            self.issues.append(error("content-address", problem, id=entry.id, path=where))
        return data

    def exists(self, kind: str, object_id: str) -> bool:
        return self.view.has(kind, object_id)

    def any_kind(self, object_id: str) -> str | None:
        return next((k for k in ENDPOINT_KINDS if self.exists(k, object_id)), None)


Examined = tuple[Any, ...]  # ("ok", data, made id) or (issue kind, message)


def examine(kind_name: str, raw: bytes | None, where: str) -> Examined:
    """What one file's bytes hold, whatever its path: the valid mapping and the id its
    content makes, or why it is not one. Pure, so a cache can keep it by content."""
    kind = KINDS.get(kind_name)
    parsed = parse(kind, raw, where)
    if parsed.data is None:
        return ("unparseable", str(parsed.problem))
    data = parsed.data
    if kind_name == DECISION:
        problems = [f"{f} is missing" for f in DECISION_FIELDS if not isinstance(data.get(f), str)]
        if not problems and data["decision"] not in ("approved", "rejected"):
            problems.append(f"decision {data['decision']!r} is not approved or rejected")
        if problems:
            return ("schema", "not a valid decision record: " + "; ".join(problems))
        return ("ok", data, None)
    assert kind is not None
    problems = kind.validate(data)
    if problems:
        return ("schema", f"not a valid {kind.name}: " + "; ".join(problems))
    if kind_name == "source":
        return ("ok", data, None)
    try:
        made = kind.make_id(data)
    except (TypeError, ValueError) as exc:
        made = f"(none: {exc})"
    return ("ok", data, made)


def _rel_for(kind: str, object_id: str) -> str | None:
    if kind == "source":
        return (
            f"sources/{ids.shard(object_id)}/{object_id}/meta.yaml"
            if ids.is_source_id(object_id)
            else None
        )
    if kind == DECISION:
        return (
            f"decided/{ids.shard(object_id)}/{object_id}.yaml"
            if ids.is_proposal_id(object_id)
            else None
        )
    found = KINDS.get(kind)
    if found is None or not ids.is_object_id(object_id):
        return None
    return f"{found.directory}/{ids.shard(object_id)}/{object_id}{found.ext}"


def object_path(knowledge: Knowledge, kind: str, object_id: str) -> str | None:
    rel = knowledge.rels.get((kind, object_id)) or _rel_for(kind, object_id)
    return knowledge.path(rel) if rel else None


# -- references ------------------------------------------------------------------------------
def check_object(k: Knowledge, kind: str, obj: Obj, *, require_citations: bool) -> list[Issue]:
    """Citations and references of one valid object."""
    oid = str(obj["id"])
    out: list[Issue] = []

    def where() -> str | None:
        return object_path(k, kind, oid)

    def dangling(field: str, target: str, what: str) -> None:
        out.append(
            error(
                "dangling",
                f"{field} names {what} {target}, which does not exist",
                id=oid,
                path=where(),
            )
        )

    def cited(field: str, items: Iterable[str]) -> None:
        for item in items:
            if ids.is_source_id(item):
                if not k.exists("source", item):
                    dangling(field, item, "source")
            elif not k.exists("evidence", item):
                dangling(field, item, "evidence")

    if kind == "claim":
        # a redacted claim's citations went with its words (`vouch redact`)
        if not obj.get("evidence") and require_citations and obj.get("status") != "redacted":
            out.append(
                error(
                    "uncited",
                    "cites no source or evidence (every claim needs one: review.require_citations)",
                    id=oid,
                    path=where(),
                )
            )
        cited("evidence", obj.get("evidence") or ())
        redacted = _redacted_citations(k, obj.get("evidence") or ())
        if redacted and obj.get("status") not in HIDDEN_STATUSES:
            out.append(
                warn(
                    "cites-redacted",
                    f"cites {', '.join(redacted)}, whose source a decision redacted: "
                    "re-cite it (`vouch propose-change ID --op recite`) or redact/archive it",
                    id=oid,
                    path=where(),
                )
            )
        for field, ref_kind in (
            ("entities", "entity"),
            ("supersedes", "claim"),
            ("contradicts", "claim"),
        ):
            for target in obj.get(field) or ():
                if not k.exists(ref_kind, target):
                    dangling(field, target, ref_kind)
        newer = obj.get("superseded_by")
        if newer and not k.exists("claim", newer):
            dangling("superseded_by", newer, "claim")
    elif kind == "relation":
        for end in ("source", "target"):
            if k.any_kind(obj[end]) is None:
                dangling(end, obj[end], "object")
        if obj["source"] == obj["target"]:
            out.append(
                error(
                    "schema",
                    "a relation cannot point from an object to itself",
                    id=oid,
                    path=where(),
                )
            )
        cited("evidence", obj.get("evidence") or ())
    elif kind == "page":
        for field, ref_kind in (("claims", "claim"), ("entities", "entity"), ("sources", "source")):
            for target in obj.get(field) or ():
                if not k.exists(ref_kind, target):
                    dangling(field, target, ref_kind)
        gone = [s for s in obj.get("sources") or () if source_kind.is_redacted(k.get("source", s))]
        if gone and obj.get("status") not in HIDDEN_STATUSES:
            out.append(
                warn(
                    "cites-redacted",
                    f"lists source {', '.join(s[:12] + '…' for s in gone)}, which a "
                    "decision redacted: propose the page without it, or redact the page",
                    id=oid,
                    path=where(),
                )
            )
    elif kind == "evidence" and not k.exists("source", obj["source_id"]):
        dangling("source_id", obj["source_id"], "source")
    elif kind == "evidence" and _quotes_redacted(k, obj):
        out.append(
            error(
                "redacted-quote",
                f"quotes source {str(obj['source_id'])[:12]}…, which a decision redacted "
                "(a merge of a branch made before the redaction brings such evidence "
                "back): propose `vouch redact` of the source again — it removes what is "
                "left",
                id=oid,
                path=where(),
            )
        )
    elif kind == "source":
        for field in ("supersedes", "superseded_by"):
            version = obj.get(field)
            if version and not k.exists("source", version):
                dangling(field, version, "source version")
    return out


def _quotes_redacted(k: Knowledge, evidence: Obj) -> bool:
    """Whether evidence holds words (a quote, a span's hash, a heading's anchor) of a
    source that is a tombstone."""
    words = evidence.get("quote") or evidence.get("hash") or _anchor(evidence)
    return bool(words) and source_kind.is_redacted(k.get("source", str(evidence["source_id"])))


def _anchor(evidence: Obj) -> bool:
    locator = str(evidence.get("locator") or "")
    return locator.startswith("#") and locator != REDACTED_ANCHOR


def _redacted_citations(k: Knowledge, items: Iterable[str]) -> list[str]:
    """The citations among `items` that point into a redacted source."""
    out = []
    for item in items:
        if ids.is_source_id(item):
            found = source_kind.is_redacted(k.get("source", item))
        else:
            evidence = k.get("evidence", item) if ids.is_object_id(item) else None
            sid = str(evidence.get("source_id")) if evidence else ""
            found = ids.is_source_id(sid) and source_kind.is_redacted(k.get("source", sid))
        if found:
            out.append(str(item)[:12] + "…" if ids.is_source_id(item) else str(item))
    return out


# -- links between claims ----------------------------------------------------------------------
def _successors(claim: Obj) -> list[str]:
    newer = claim.get("superseded_by")
    return [newer] if isinstance(newer, str) and newer else []


def check_links(k: Knowledge, focus: Iterable[str], *, complete: bool) -> list[Issue]:
    """Supersede cycles and one-sided links for the claims in `focus`.

    With `complete` every claim is loaded already; otherwise the claims reachable along
    supersede links from `focus` are loaded (at most _LINK_LIMIT), which is where a
    cycle through a changed claim must lie.
    """
    focus = list(dict.fromkeys(focus))
    claims = (
        _closure(k, focus)
        if not complete
        else {oid: obj for (kind, oid), obj in k.objects.items() if kind == "claim" and obj}
    )
    out: list[Issue] = []

    def peer(other: str) -> Obj | None:
        return claims.get(other) or k.get("claim", other)

    for oid in focus:
        claim = claims.get(oid)
        if claim is None:
            continue
        found: list[tuple[str, str, str]] = []  # (severity, kind, message)
        for other in claim.get("contradicts") or ():
            them = peer(other)
            if them is not None and oid not in (them.get("contradicts") or ()):
                found.append(
                    (
                        ERROR,
                        "asymmetric-contradiction",
                        f"contradicts {other}, "
                        "which does not contradict it (contradiction is symmetric)",
                    )
                )
        newer = claim.get("superseded_by")
        if newer:
            them = peer(newer)
            if them is not None and oid not in (them.get("supersedes") or ()):
                found.append(
                    (
                        WARN,
                        "asymmetric-supersession",
                        f"superseded_by {newer}, whose supersedes does not list it",
                    )
                )
            if claim.get("status") != "superseded":
                found.append(
                    (
                        WARN,
                        "asymmetric-supersession",
                        f"superseded_by {newer} but "
                        f"its status is {claim.get('status')!r}, not superseded",
                    )
                )
        for older in claim.get("supersedes") or ():
            them = peer(older)
            if them is not None and them.get("superseded_by") != oid:
                found.append(
                    (
                        WARN,
                        "asymmetric-supersession",
                        f"supersedes {older}, whose superseded_by is {them.get('superseded_by')!r}",
                    )
                )
        if found:
            where = object_path(k, "claim", oid)
            out += [
                issue(kind, severity, message, id=oid, path=where)
                for severity, kind, message in found
            ]
    out += _cycles(k, claims, set(focus))
    return out


def _closure(k: Knowledge, focus: list[str]) -> dict[str, Obj]:
    found: dict[str, Obj] = {}
    todo = list(focus)
    while todo and len(found) < _LINK_LIMIT:
        oid = todo.pop()
        if oid in found:
            continue
        claim = k.get("claim", oid)
        if claim is None:
            continue
        found[oid] = claim
        todo += [*_successors(claim), *(claim.get("supersedes") or ())]
    return found


def _cycles(k: Knowledge, claims: dict[str, Obj], focus: set[str]) -> list[Issue]:
    """Cycles of the supersession graph (old -> new) that touch `focus`, each once."""
    edges: dict[str, set[str]] = {oid: set(_successors(c)) for oid, c in claims.items()}
    for oid, claim in claims.items():
        for older in claim.get("supersedes") or ():
            if older in claims:
                edges[older].add(oid)
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    out: list[Issue] = []
    for start in sorted(edges):
        if start in state:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, nexts = stack[-1]
            nxt = next(nexts, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = 2
                continue
            if nxt not in edges:
                continue
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt) :]
                if focus & set(cycle):
                    first = min(cycle)
                    out.append(
                        error(
                            "supersede-cycle",
                            "supersession runs in a circle: " + " -> ".join([*cycle, nxt]),
                            id=first,
                            path=object_path(k, "claim", first),
                        )
                    )
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(edges[nxt]))))
    return out


# -- time ------------------------------------------------------------------------------------
def stale(
    k: Knowledge, claims: Iterable[Obj], days: int, now: datetime | None = None
) -> list[Issue]:
    """Live claims whose last confirmation (else update, else creation) is older than
    `days` days."""
    cutoff = (now or datetime.now(UTC)) - timedelta(days=days)
    out: list[Issue] = []
    for claim in claims:
        if claim.get("status") in HIDDEN_STATUSES:
            continue
        stamp = claim.get("last_confirmed_at") or claim.get("updated_at") or claim.get("created_at")
        when = _when(stamp)
        if when is not None and when < cutoff:
            out.append(
                warn(
                    "stale",
                    f"not confirmed for {(cutoff - when).days + days} days "
                    f"(since {when:%Y-%m-%d}); confirm it or archive it",
                    id=str(claim["id"]),
                    path=object_path(k, "claim", str(claim["id"])),
                )
            )
    return out


def _when(stamp: object) -> datetime | None:
    if isinstance(stamp, datetime):
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    if not isinstance(stamp, str):
        return None
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
