"""Evaluation sets for bench/tune_search.py: built as knowledge bases once, searched once.

A set is a corpus (a directory of documents, or sources plus approved claims in a real
knowledge base) and queries `{"query", "relevant", "group", "half"}`. For every query
both channels' candidate lists are collected once at the tuning depth (the engine's own
`SearchIndex.lexical` / `.vector`, so stopword removal and the all-words-first order are
the product's) and cached as JSON under bench/out/; fusion is then replayed in pure
Python for any setting.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vouch.search import access
from vouch.search.evalrun import build_corpus_kb
from vouch.search.request import HIDDEN_STATUSES, SEARCH_KINDS
from vouch.search.weighting import COVERAGE_HITS, content_stems, coverage
from vouch.store.kb import KB

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
DEPTH = 200  # candidates per channel (the lead's minimum per-channel depth)
CACHE_VERSION = 1


@dataclass(frozen=True)
class Query:
    query: str
    relevant: frozenset[str]
    group: str
    half: str  # "tune", "heldout" or "all" (a set without a split)


@dataclass
class Collected:
    """One query's candidates: lexical [(chunk, bm25)], vector [(chunk, cosine)], the
    lexical coverage of its best hits, and chunk -> object id for every candidate."""

    query: Query
    lexical: list[tuple[int, float]]
    vector: list[tuple[int, float]]
    coverage: float
    objects: dict[int, str]

    @property
    def held(self) -> int:
        """How many of the query's content words the best lexical hit holds
        (`weighting.held_words`; `coverage` is their share of the query's)."""
        return round(self.coverage * len(content_stems(self.query.query)))


def document_bytes(title: str, text: str) -> bytes:
    return f"# {title}\n\n{text}\n".encode()


def eval_docs(path: Path = ROOT / "examples/eval/corpus.jsonl.gz") -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def subset(docs: list[dict[str, Any]], size: int | None) -> list[dict[str, Any]]:
    """The first `size` documents in a stable pseudo-random order (all for None)."""
    if size is None or size >= len(docs):
        return docs
    ranked = sorted(docs, key=lambda d: hashlib.sha256(("size:" + d["id"]).encode()).hexdigest())
    return ranked[:size]


def materialize(docs: list[dict[str, Any]], out: Path) -> Path:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for doc in docs:
        (out / f"{doc['id']}.md").write_bytes(document_bytes(doc["title"], doc["text"]))
    return out


def load_queries(path: Path, ids: set[str] | None = None) -> list[Query]:
    out = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        relevant = frozenset(row["relevant"])
        if ids is not None and not relevant <= ids:
            continue
        out.append(Query(row["query"], relevant, row.get("group", "all"), row.get("half", "all")))
    return out


def corpus_kb(name: str, docs_dir: Path) -> KB:
    out = OUT / f"{name}-kb"
    stamp = str(sorted(p.name for p in docs_dir.iterdir()))
    marker = out / ".built"
    if marker.is_file() and marker.read_text() == stamp:
        return KB.open(out / "kb")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    kb = build_corpus_kb(docs_dir, out / "kb")
    marker.write_text(stamp)
    return kb


def collect(name: str, kb: KB, queries: list[Query], depth: int = DEPTH) -> list[Collected]:
    cache = OUT / f"{name}-lists.json"
    from vouch.embed import model as embed
    from vouch.index.store import CHUNKER_VERSION, SCHEMA_VERSION
    from vouch.search.weighting import QUERY_STOPWORDS

    # what shapes the candidates: a change to any makes the cached lists stale (the
    # schema version: the vectors' token weights came with schema 7; the model's id
    # changes with its files)
    model = embed.resolve(kb.config, kb.root)
    shaping = [
        CHUNKER_VERSION,
        SCHEMA_VERSION,
        sorted(QUERY_STOPWORDS),
        model.model_id if model else "none",
    ]
    key = [CACHE_VERSION, depth, [q.query for q in queries], str(kb.root), shaping]
    if cache.is_file():
        saved = json.loads(cache.read_text())
        if saved["key"] == key:
            return [
                Collected(
                    q,
                    [(int(c), float(v)) for c, v in row["lexical"]],
                    [(int(c), float(v)) for c, v in row["vector"]],
                    row["coverage"],
                    {int(k): v for k, v in row["objects"].items()},
                )
                for q, row in zip(queries, saved["rows"], strict=True)
            ]
    index = access.open_index(kb, {})
    f = access.filters(kinds=SEARCH_KINDS, tags=(), types=(), statuses=(), exclude=HIDDEN_STATUSES)
    rows = []
    for q in queries:
        lex = [(h.chunk_id, h.score) for h in index.lexical(q.query, depth, f)]
        vec = [(c, s) for c, s in index.vector(q.query, depth, f) if s > 0]
        top = [c for c, _ in lex[:COVERAGE_HITS]]
        infos = index.chunks({*top, *(c for c, _ in lex), *(c for c, _ in vec)})
        cov = coverage(q.query, [infos[c].text for c in top if c in infos])
        objects = {c: i.id for c, i in infos.items()}
        rows.append({"lexical": lex, "vector": vec, "coverage": cov, "objects": objects})
    cache.write_text(json.dumps({"key": key, "rows": rows}))
    return collect(name, kb, queries, depth)


def kb_set_kb(rows: list[dict[str, Any]], docs: list[dict[str, Any]]) -> tuple[KB, list[Query]]:
    """The knowledge-base-shaped set (examples/eval/kb.jsonl) as a real knowledge base:
    its documents registered as sources, each claim proposed by one actor with its source
    as evidence and approved by another, exactly as users do. Cached under bench/out/."""
    from vouch.core.ids import sha256_hex
    from vouch.methods import registry as ops
    from vouch.methods.context import CallContext

    by_id = {d["id"]: d for d in docs}
    out = OUT / "kbset-kb"
    stamp = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    marker = out / ".built"
    claims_file = out / "claims.json"
    if not (marker.is_file() and marker.read_text() == stamp):
        shutil.rmtree(out, ignore_errors=True)
        docs_dir = materialize([by_id[r["doc"]] for r in rows], out / "docs")
        kb = build_corpus_kb(docs_dir, out / "kb")
        author = CallContext(kb_path=str(kb.root), actor_override="eval-author")
        reviewer = CallContext(kb_path=str(kb.root), actor_override="eval-reviewer")
        claim_ids: dict[str, str] = {}
        for r in rows:
            if not r.get("claim"):
                continue
            doc = by_id[r["doc"]]
            source = sha256_hex(document_bytes(doc["title"], doc["text"]))
            proposed = ops.invoke(
                author, "kb.propose_claim", {"text": r["claim"], "evidence": [source]}
            )
            with _as_person("eval-reviewer"):  # reads it (pins the commit), approves it
                ops.invoke(reviewer, "kb.read_proposal", {"id": proposed["proposal_id"]})
                approved = ops.invoke(
                    reviewer, "kb.approve", {"proposal_id": proposed["proposal_id"]}
                )
            claim_ids[r["claim"]] = approved["object_id"]
        claims_file.write_text(json.dumps(claim_ids))
        marker.write_text(stamp)
    kb = KB.open(out / "kb")
    claim_ids = json.loads(claims_file.read_text())
    queries = [
        Query(r["query"], frozenset([claim_ids[r["claim"]]]), r["group"], r["half"])
        for r in rows
        if r.get("claim")
    ]
    return kb, queries


@contextmanager
def _as_person(name: str) -> Iterator[None]:
    """git's committer identity is `name` for the duration: the gate tells people apart
    by it (issue 34), so the reviewer is another person than the proposer, as `--as`
    labels alone no longer make them."""
    keys = ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(dict(zip(keys, (name, f"{name}@example.invalid"), strict=True)))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
