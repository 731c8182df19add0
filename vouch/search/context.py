"""Context packs: the approved knowledge most relevant to a task, packed into a budget.

`build(kb, task)` answers `kb.context` / `vouch context TASK`:

1. search (`engine.search`, hybrid) for the task over approved claims, pages, entities
   and relations — never sources (captured bytes, not reviewed knowledge) and never
   open proposals — keeping the hits the words match and those whose embedding is
   nearly as close as the closest (see `_candidates`);
2. add the neighbourhood of the best hits: a claim's entities and the claims it
   contradicts, a page's claims and entities, a relation's two ends, the relations
   that touch an entity — each scored at half its seed's score;
3. read each candidate's file, in rank order: superseded, archived and redacted
   objects are dropped whatever the index said, and the citations are resolved
   (sources and evidence spans, with titles, locators and the path form search cites,
   `cite_path`: `docs/a.rst:L5-L9`; a page cites its sources and claims); with
   `require_citations` an item citing nothing is dropped;
4. pack greedily into `max_chars` (the sum of the items' `text`): an item that does not
   fit whole is cut after its last whole sentence that fits (or left out when not even
   one fits), and packing goes on with the next, smaller items. `min_items` makes the
   pack hold at least that many items when that many exist: the budget is then shared
   between the first `min_items` — the only case an item may be cut inside a sentence,
   at a word, marked with "…", when one sentence alone exceeds its share.

The result is a ContextPack: `{task, items: [{kind, id, title, text, status, score,
citations, type, section, via, partial}], total_chars, truncated, max_chars,
dropped_uncited, corpus_revision, unreviewed, next_step}`. `truncated` says the budget
left something out or cut an item. When no item is packed, `unreviewed` holds the best
source passages (`passages`: never knowledge, `reviewed: false`, within the same
budget) and `next_step` says how to make one reviewed knowledge (or, with no passage
either, how to register documents that would hold one); else `[]` and null.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from vouch.core import ids
from vouch.core.progress import Progress
from vouch.errors import CorruptFile, InvalidId, UsageError
from vouch.kinds import KINDS, Obj, module_for
from vouch.kinds.source import path_of
from vouch.search import passages
from vouch.search import query as queries
from vouch.search.engine import search
from vouch.search.packing import Candidate, Item, Resolved, pack
from vouch.search.request import HIDDEN_STATUSES, SearchRequest
from vouch.store.kb import KB, path_for

PACK_KINDS = ("claim", "page", "entity", "relation")
NEIGHBOUR_SEEDS = 5  # the best hits whose neighbourhood joins the candidates
NEIGHBOUR_DECAY = 0.5  # a neighbour's score: its seed's, times this
RELATION_LOOKUPS = 3  # entities whose relations are looked up (in one lexical query)
RELATIONS_PER_ENTITY = 5
MAX_CANDIDATES = 80
RELATIVE_COSINE = 0.75  # a hit only the vector channel found: at least this × the best
CHARS_PER_CANDIDATE = 160  # search depth for a budget: one hit per 160 characters (plus
# neighbours, about one item per 125 characters fills it; deeper costs the search more)
WARM_OBJECTS = 50_000  # objects a long-lived process keeps parsed (about 100 MB at most)
RACY_NS = 200_000_000


@dataclass
class _Reader:
    """Objects read once per pack (a source is cited by many claims), and across packs
    in a long-lived process (`warm`, a server) while the file's stat is unchanged."""

    kb: KB
    warm: dict[tuple[str, str], tuple[tuple[int, int, int], Obj]]
    objects: dict[tuple[str, str], Obj | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = str(self.kb.dir)

    def get(self, kind: str, object_id: str) -> Obj | None:
        key = (kind, object_id)
        if key not in self.objects:
            self.objects[key] = self._read(kind, object_id)
        return self.objects[key]

    def _path(self, kind: str, object_id: str) -> str:
        return os.path.join(self.root, path_for(KINDS[kind], object_id))  # no pathlib: hot

    def _read(self, kind: str, object_id: str) -> Obj | None:
        try:
            st = os.stat(self._path(kind, object_id))
        except (FileNotFoundError, NotADirectoryError, InvalidId):
            return None
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        known = self.warm.get((kind, object_id))
        if known is not None and known[0] == stamp:
            return known[1]
        try:
            obj = self.kb.read(KINDS[kind], object_id)
        except (CorruptFile, InvalidId, UnicodeDecodeError, ValueError):
            return None  # `vouch doctor` names a broken or misnamed file; a pack skips it
        # as git does for its index: a file changed within the clock's resolution may
        # change again with the same stamp, so it is not trusted until it settles
        if obj is not None and time.time_ns() - st.st_mtime_ns > RACY_NS:
            if len(self.warm) >= WARM_OBJECTS:
                self.warm.clear()
            self.warm[(kind, object_id)] = (stamp, obj)
        return obj

    def kind_of(self, object_id: str) -> str | None:
        if ids.is_source_id(object_id) or not ids.is_object_id(object_id):
            return None
        return next(
            (
                k
                for k in ("entity", "claim", "page", "relation")
                if os.path.isfile(self._path(k, object_id))
            ),
            None,
        )


def build(
    kb: KB,
    task: str,
    *,
    max_chars: int = 4000,
    min_items: int = 0,
    require_citations: bool = False,
    warm: dict[str, Any] | None = None,
    transport: str = "cli",
    progress: Progress | None = None,
    refresh: bool = True,
) -> dict[str, Any]:
    """The ContextPack for `task` (see the module docstring); `progress` hears of an
    index build. With `refresh` false (another knowledge base's pack,
    `vouch.search.context_across`) the index is read as it is and no search is logged."""
    text = queries.normalize(task)
    if max_chars < 1:
        raise UsageError("max_chars must be at least 1")
    if min_items < 0:
        raise UsageError("min_items must be 0 or more")
    warm = warm if warm is not None else {}
    top = min(MAX_CANDIDATES, max(10, max_chars // CHARS_PER_CANDIDATE + min_items))
    response = search(
        kb,
        SearchRequest(
            query=text,
            top=top,
            kinds=PACK_KINDS,
            trace=True,
            transport=transport,
            refresh=refresh,
            log=refresh,
        ),
        warm=warm,
        progress=progress,
    )
    reader = _Reader(kb, warm.setdefault(f"context-objects:{kb.dir}", {}))
    candidates = _candidates(response)
    candidates = _with_neighbours(kb, reader, candidates, warm, refresh)
    dropped = [0]

    def resolve(c: Candidate) -> Item | None:
        item = _item(reader, c)
        if item is not None and require_citations and not item.citations:
            dropped[0] += 1
            return None
        return item

    packed, truncated = pack(candidates, Resolved(resolve), max_chars, min_items)
    unreviewed: list[dict[str, Any]] = []
    if not packed:  # nothing approved answers: the best source passages, marked as such
        unreviewed = passages.best(
            kb,
            text,
            max_chars,
            relative_cosine=RELATIVE_COSINE,
            warm=warm,
            transport=transport,
            refresh=refresh,
        )
    return {
        "task": text,
        "items": _marked(kb, reader, [item.to_json(cut) for item, cut in packed]),
        "total_chars": sum(len(cut) for _, cut in packed),
        "truncated": truncated,
        "max_chars": max_chars,
        "dropped_uncited": dropped[0],
        "corpus_revision": response.get("corpus_revision"),
        "unreviewed": unreviewed,
        "next_step": None if packed else passages.next_step(unreviewed),
    }


def _marked(kb: KB, reader: _Reader, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`drifted` on each claim item whose cited lines its file no longer holds as
    registered, as search marks its hits (`vouch.health.drift`)."""
    claims = [o for i in items if i["kind"] == "claim" and (o := reader.get("claim", i["id"]))]
    if not claims:
        return items
    from vouch.health.drift import of_claims

    found: dict[str, list[dict[str, Any]]] = {}
    for d in of_claims(kb, claims):
        found.setdefault(d.claim_id, []).append(
            {"path": d.path, "locator": d.locator, "state": d.state, "now": d.now}
        )
    for item in items:
        if item["kind"] == "claim" and item["id"] in found:
            item["drifted"] = found[item["id"]]
    return items


# -- candidates -----------------------------------------------------------------------
def _candidates(response: dict[str, Any]) -> list[Candidate]:
    """One candidate per relevant object — per section for a page — in rank order.

    Search ranks every chunk the vector channel returns, and a static embedding finds
    something "similar" to any text at all, even to letters that form no word. So a
    hit whose words do not match joins only when its cosine is close to the best one's
    (RELATIVE_COSINE): a paraphrase of the task keeps its best matches, and a task the
    knowledge base knows nothing about gets few items instead of a budget of filler.
    """
    cosines = {v["chunk_id"]: v["cosine"] for v in response["trace"]["vector"]}
    floor = RELATIVE_COSINE * max(cosines.values(), default=0.0)
    out: dict[tuple[str, str, str | None], Candidate] = {}
    for r in response["results"]:
        if r.get("uncommitted"):
            continue  # a work-tree file HEAD does not hold: not reviewed knowledge
        if not r["score_breakdown"].get("fts") and cosines.get(r["chunk_id"], 0.0) < floor:
            continue
        section = str(r["source"].get("section") or "") if r["kind"] == "page" else None
        key = (r["kind"], r["id"], section)
        if key not in out:
            # a claim's or entity's item text is its chunk's text, whitespace collapsed
            text = " ".join(r["text"].split()) if r["kind"] in ("claim", "entity") else None
            out[key] = Candidate(r["kind"], r["id"], float(r["score"]), section, text=text)
    return list(out.values())


def _with_neighbours(
    kb: KB, reader: _Reader, found: list[Candidate], warm: dict[str, Any], refresh: bool = True
) -> list[Candidate]:
    """`found` plus the entity/relation neighbourhood of its best hits, best first."""
    by_key = {(c.kind, c.id, c.section): c for c in found}
    seeds: list[Candidate] = []
    for c in found:
        if all(s.id != c.id for s in seeds):
            seeds.append(c)
        if len(seeds) == NEIGHBOUR_SEEDS:
            break

    def add(kind: str | None, object_id: object, seed: Candidate) -> None:
        if kind is None or not isinstance(object_id, str):
            return
        score = seed.score * NEIGHBOUR_DECAY
        if kind == "page":
            return  # a page is reached through its sections, i.e. by search
        key = (kind, object_id, None)
        known = by_key.get(key)
        if known is None:
            by_key[key] = Candidate(kind, object_id, score, via=seed.id)
        elif known.score < score:
            known.score = score

    lookups: list[tuple[str, Candidate]] = []
    for seed in seeds:
        obj = reader.get(seed.kind, seed.id)
        if obj is None:
            continue
        if seed.kind == "claim":
            for eid in obj.get("entities") or []:
                add("entity", eid, seed)
                lookups.append((eid, seed))
            for cid in obj.get("contradicts") or []:
                add("claim", cid, seed)
        elif seed.kind == "page":
            for cid in obj.get("claims") or []:
                add("claim", cid, seed)
            for eid in obj.get("entities") or []:
                add("entity", eid, seed)
        elif seed.kind == "relation":
            for end in ("source", "target"):
                add(reader.kind_of(str(obj.get(end) or "")), obj.get(end), seed)
        elif seed.kind == "entity":
            lookups.insert(0, (seed.id, seed))
    for rid, seed in _relations_of(kb, reader, lookups, warm, refresh):
        add("relation", rid, seed)
    ranked = sorted(by_key.values(), key=lambda c: -c.score)  # stable: hits before ties
    for n, c in enumerate(ranked):
        c.rank = n
    return ranked


def _relations_of(
    kb: KB,
    reader: _Reader,
    entities: list[tuple[str, Candidate]],
    warm: dict[str, Any],
    refresh: bool = True,
) -> list[tuple[str, Candidate]]:
    """(relation id, seed) for the relations with one of the first RELATION_LOOKUPS
    `entities` at an end. The index titles a relation with the ids of its ends, so one
    lexical query for their hash parts (8 hex digits: rare words) finds the candidates
    cheaply; the relation files decide."""
    wanted: dict[str, Candidate] = {}
    for eid, seed in entities:
        if len(wanted) < RELATION_LOOKUPS and eid not in wanted and ids.is_object_id(eid):
            wanted[eid] = seed
    if not wanted:
        return []
    query = " ".join(eid.rsplit("-", 1)[1] for eid in wanted)
    found = search(
        kb,
        SearchRequest(
            query=query,
            mode="fts",
            kinds=("relation",),
            top=RELATIONS_PER_ENTITY * len(wanted),
            log=False,
            refresh=refresh,
        ),
        warm=warm,
    )
    out: list[tuple[str, Candidate]] = []
    per: dict[str, int] = {}
    for r in found["results"]:
        rel = reader.get("relation", r["id"])
        for end in (rel or {}).get("source"), (rel or {}).get("target"):
            if end in wanted and per.get(end, 0) < RELATIONS_PER_ENTITY:
                per[end] = per.get(end, 0) + 1
                out.append((str(r["id"]), wanted[end]))
                break
    return out


# -- items --------------------------------------------------------------------------------
def _item(reader: _Reader, c: Candidate) -> Item | None:
    obj = reader.get(c.kind, c.id)
    if obj is None or obj.get("status") in HIDDEN_STATUSES:
        return None
    kind = KINDS[c.kind]
    title = kind.title_of(obj)
    type_ = str(obj.get(kind.type_field) or "") if kind.type_field else ""
    status = str(obj.get("status") or "")
    if c.kind == "page":
        text = _section_text(obj, c.section or "")
        if text is None:
            return None
        cited = [
            *_cite(reader, obj.get("sources") or []),
            *_cite_claims(reader, obj.get("claims") or []),
        ]
        return Item(
            "page", c.id, title, text, status, c.score, cited, type_, c.section, c.via, c.rank
        )
    if c.kind == "claim":
        text = " ".join(str(obj.get("text") or "").split())
    elif c.kind == "relation":
        text = _relation_text(reader, obj)
    else:  # an entity: its name, aliases and description, as the index holds them
        text = " ".join(module_for(kind).chunks(obj)[0].text.split())
    return Item(
        c.kind,
        c.id,
        title,
        text,
        status,
        c.score,
        _cite(reader, obj.get("evidence") or []),
        type_,
        None,
        c.via,
        c.rank,
    )


def _section_text(page: Obj, heading: str) -> str | None:
    from vouch.kinds import page as page_kind

    for sec in page_kind.sections(str(page.get("body") or "")):
        if sec.heading == heading:
            return sec.text
    return None


def _relation_text(reader: _Reader, rel: Obj) -> str:
    def label(object_id: str) -> str:
        kind = reader.kind_of(object_id)
        obj = reader.get(kind, object_id) if kind else None
        return " ".join(KINDS[kind].title_of(obj).split()) if kind and obj else object_id

    return (
        f"{label(str(rel['source']))} {str(rel['relation']).replace('_', ' ')} "
        f"{label(str(rel['target']))}"
    )


def _cite(reader: _Reader, cited: list[str]) -> list[dict[str, Any]]:
    """Each cited source or evidence id that resolves, as {id, kind, title, locator}
    (evidence adds source_id and its quote)."""
    out = []
    for cid in dict.fromkeys(cited):
        if ids.is_source_id(cid):
            source = reader.get("source", cid)
            if source is not None:
                out.append(
                    {
                        "id": cid,
                        "kind": "source",
                        "title": _source_title(source),
                        "locator": source.get("locator"),
                        "cite_path": path_of(source),
                    }
                )
            continue
        ev = reader.get("evidence", cid) if ids.is_object_id(cid) else None
        if ev is None:
            continue
        source = reader.get("source", str(ev["source_id"]))
        entry = {
            "id": cid,
            "kind": "evidence",
            "title": _source_title(source) if source else None,
            "locator": ev.get("locator"),
            "source_id": ev["source_id"],
            # `docs/a.rst:L5-L9`, as search and why cite it (None: a source with no path)
            "cite_path": path_of(source, ev.get("locator")),
        }
        if ev.get("quote"):
            entry["quote"] = ev["quote"]
        turns = _turns(reader, source, str(ev.get("locator") or ""))
        if turns:
            entry["turns"] = turns
        out.append(entry)
    return out


def _turns(reader: _Reader, source: Obj | None, locator: str) -> list[dict[str, Any]]:
    """For a turn citation (`T12`, `T12-T14`) of a transcript: the cited turns with one
    neighbouring turn each side from the same session, so a pack carries the exchange a
    claim came from (issue 19). Empty for any other citation, or a source that does not
    read as a transcript."""
    from vouch.kinds import evidence as evidence_kind

    m = evidence_kind.TURN_SPAN.match(locator)
    if m is None or source is None or source.get("type") != "transcript":
        return []
    first, last = int(m.group(1)), int(m.group(2) or m.group(1))
    key = ("transcript", str(source["id"]))
    if key not in reader.objects:
        from vouch.core import transcripts

        content = reader.kb.source_content(str(source["id"]))
        try:
            parsed = transcripts.parse_content(content) if content is not None else None
        except transcripts.TranscriptError:
            parsed = None
        reader.objects[key] = {"turns": parsed.turns if parsed else []}
    turns = (reader.objects[key] or {}).get("turns") or []
    if not 1 <= first <= last <= len(turns):
        return []
    sessions = {turns[first - 1].session, turns[last - 1].session}
    shown = range(max(1, first - 1), min(len(turns), last + 1) + 1)
    return [
        {**turns[n - 1].to_json(), "cited": first <= n <= last}
        for n in shown
        if turns[n - 1].session in sessions
    ]


def _cite_claims(reader: _Reader, cited: list[str]) -> list[dict[str, Any]]:
    """A page's claims that are current knowledge, as citations of the page."""
    out = []
    for cid in dict.fromkeys(cited):
        claim = reader.get("claim", cid) if ids.is_object_id(cid) else None
        if claim is not None and claim.get("status") not in HIDDEN_STATUSES:
            out.append(
                {
                    "id": cid,
                    "kind": "claim",
                    "title": KINDS["claim"].title_of(claim),
                    "locator": None,
                }
            )
    return out


def _source_title(source: Obj) -> str:
    return str(source.get("title") or source.get("locator") or source["id"][:12])
