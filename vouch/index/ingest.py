"""What a full build and an incremental refresh share: reading an object into a Doc,
embedding its chunks, inserting its rows, and the `index_meta` values that record the
result. `build` (rebuild aside + swap) and `refresh` (from the git diff) use them.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vouch.core import ids
from vouch.core.progress import Progress
from vouch.embed import fitted
from vouch.embed import model as embed
from vouch.errors import CorruptFile, InvalidId
from vouch.index import chunking, freshness, store
from vouch.index.chunking import Doc
from vouch.index.lexical import ChunkRow
from vouch.index.settings import Settings
from vouch.index.state import Counts
from vouch.kinds import KINDS, source
from vouch.store.kb import KB, path_for

log = logging.getLogger("vouch.index")

EMBED_BATCH = 16384  # texts per model2vec call (progress is reported between calls)


Invalid = dict[str, str]  # {"path": repository path, "reason": what is wrong with it}


@dataclass
class Report:
    """What a build or refresh did; the counts let tests and `index status` check that a
    refresh touched only what changed."""

    mode: str  # "rebuild" | "refresh" | "none"
    documents: int = 0  # documents (objects) indexed in total
    chunks: int = 0
    reindexed: int = 0  # documents re-read and re-chunked by this run
    removed: int = 0  # documents dropped by this run
    embedded: int = 0  # chunks embedded by this run
    invalid: list[Invalid] = field(default_factory=list)  # files this run left out
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage

    def lap(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.stages[stage] = round(self.stages.get(stage, 0.0) + now - since, 3)
        return now

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "documents": self.documents,
            "chunks": self.chunks,
            "reindexed": self.reindexed,
            "removed": self.removed,
            "embedded": self.embedded,
            "skipped": [i["reason"] for i in self.invalid],
            "invalid": self.invalid,
            "seconds": round(self.seconds, 3),
            "stages": self.stages,
        }


# -- reading documents -------------------------------------------------------------------
def read_doc(
    kb: KB, kind: str, object_id: str, labels: dict[str, str], invalid: list[Invalid] | None = None
) -> Doc | None:
    """The doc for one object as its files are now; None when it is gone.

    The file is read by the kinds' one validating reader (`KB.read`). One that is not a
    valid object raises CorruptFile, or, given `invalid`, is logged, noted there and left
    out (None): a build or refresh indexes the rest and reports it. A source whose
    content cannot be read (a damaged PDF) is indexed by its title and noted too.
    """
    k = KINDS[kind]
    try:
        rel = _repo_path(kb, path_for(k, object_id))
        obj = kb.read(k, object_id)
    except (CorruptFile, InvalidId) as exc:
        if invalid is None:
            raise
        if isinstance(exc, InvalidId):  # a stray file name, e.g. `claims/ab/notes.yaml`
            rel = _repo_path(kb, f"{k.directory}/*/{object_id}{k.ext}")
        log.warning("not indexed: %s", exc.message)
        invalid.append({"path": rel, "reason": exc.message})
        return None
    if obj is None:
        return None
    if kind != "source":
        return chunking.object_doc(kind, obj, rel, labels)
    doc = chunking.source_doc(obj, kb.source_content(object_id), rel)
    if doc.problem is not None:
        found = kb.source_content_path(object_id)
        inner = found.relative_to(kb.dir).as_posix() if found else source.path_for(object_id)
        content = _repo_path(kb, inner)
        reason = (
            f"cannot index the content of {content}: {doc.problem} (indexed by its "
            "title and locator only)"
        )
        log.warning("%s", reason)
        if invalid is not None:
            invalid.append({"path": content, "reason": reason})
    return doc


def _repo_path(kb: KB, inner: str) -> str:
    """`kb.rel(inner)` for a path vouch made, without a Path object per file."""
    return _vouch_prefix(kb.dir, kb.root) + inner


@functools.lru_cache(maxsize=16)
def _vouch_prefix(directory: Path, root: Path) -> str:
    return directory.relative_to(root).as_posix() + "/"


def recorded_invalid(meta: Mapping[str, str]) -> list[Invalid]:
    """The files the index's last build or refresh left out (`index_meta` "invalid")."""
    try:
        found = json.loads(meta.get("invalid") or "[]")
    except ValueError:
        return []
    if not isinstance(found, list):
        return []
    return [
        {"path": str(i["path"]), "reason": str(i["reason"])}
        for i in found
        if isinstance(i, dict) and "path" in i and "reason" in i
    ]


# -- writing -----------------------------------------------------------------------------
def insert_docs(
    conn: sqlite3.Connection, docs: Sequence[Doc], first_id: int, vec_rows: Sequence[int | None]
) -> list[ChunkRow]:
    """Insert docs, chunks (ids from `first_id`), tags and headings; returns the rows the
    lexical backend indexes. `vec_rows[i]` is the vector row of the i-th chunk."""
    doc_rows: list[tuple[Any, ...]] = []
    chunk_rows: list[tuple[Any, ...]] = []
    tag_rows: list[tuple[str, str]] = []
    heading_rows: list[tuple[Any, ...]] = []
    lexical: list[ChunkRow] = []
    cid = first_id
    n = 0
    for d in docs:
        doc_rows.append(
            (
                d.key,
                d.kind,
                d.object_id,
                d.path,
                d.title,
                d.type,
                d.status,
                d.format,
                d.locator,
                len(d.chunks),
            )
        )
        tag_rows.extend((d.key, t) for t in dict.fromkeys(d.tags))
        heading_rows.extend(
            (d.key, d.object_id, d.path, h.text, h.level, h.start_line, h.end_line)
            for h in d.headings
        )
        for c in d.chunks:
            chunk_rows.append(
                (
                    cid,
                    d.key,
                    d.kind,
                    d.object_id,
                    c.chunk_index,
                    c.total_chunks,
                    c.title,
                    c.section,
                    c.text,
                    d.type,
                    d.status,
                    d.format,
                    d.path,
                    c.page,
                    c.start_line,
                    c.end_line,
                    vec_rows[n],
                    c.context,
                    c.turn,
                    c.speaker,
                    c.time,
                    c.session,
                )
            )
            lexical.append(
                ChunkRow(
                    cid,
                    c.title,
                    c.section,
                    c.text,
                    d.kind,
                    d.type,
                    d.status,
                    d.format,
                    d.key,
                    tuple(d.tags),
                )
            )
            cid += 1
            n += 1
    conn.executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?,?)", doc_rows)
    conn.executemany("INSERT OR IGNORE INTO doc_tags(doc_key, tag) VALUES (?,?)", tag_rows)
    conn.executemany(
        "INSERT INTO headings(doc_key, object_id, path, text, level, start_line, "
        "end_line) VALUES (?,?,?,?,?,?,?)",
        heading_rows,
    )
    conn.executemany(
        "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", chunk_rows
    )
    return lexical


def embed_texts(
    embedder: embed.Embedder | None,
    parts: list[tuple[str, ...]],
    progress: Progress | None,
    fit: fitted.Fit | None,
) -> Any:
    """One row per chunk's vector parts (`chunking.vector_parts`; none without an
    embedder), weighted by the index's `fit` when it has one; in batches between
    progress calls."""
    import numpy as np

    dims = embedder.dims if embedder else 0
    if embedder is None or not parts:
        return np.zeros((len(parts) if embedder else 0, dims), dtype=np.float32)
    if fit is not None:
        return embedder.encode_weighted(parts, fit)
    rows = []
    if progress:
        progress("indexing: embedding", 0, len(parts))
    for start in range(0, len(parts), EMBED_BATCH):
        rows.append(embedder.encode_joined(parts[start : start + EMBED_BATCH]))
        if progress:
            progress("indexing: embedding", min(start + EMBED_BATCH, len(parts)), len(parts))
    return np.concatenate(rows, axis=0)


def embed_fitting(
    embedder: embed.Embedder | None, parts: list[tuple[str, ...]], progress: Progress | None
) -> tuple[Any, fitted.Fit | None]:
    """A full build's vectors and the fit they are weighted by (`vouch.embed.fitted`);
    unweighted, and no fit, for a corpus too small or a model that cannot weigh."""
    if embedder is None or not embedder.fittable() or len(parts) < fitted.MIN_TEXTS:
        return embed_texts(embedder, parts, progress, None), None
    if progress:
        progress("indexing: embedding", 0, len(parts))
    out: tuple[Any, fitted.Fit | None] = embedder.encode_fitting(parts, progress)
    return out


def corpus_revision(source_hash: str, settings: Settings, fit_texts: object) -> str:
    """Changes whenever what a search can return changes (content or how it is indexed,
    the token weights' fit included)."""
    return ids.sha256_hex(
        f"{source_hash}|{store.SCHEMA_VERSION}|{store.CHUNKER_VERSION}|"
        f"{settings.model_id}|{settings.lexical}|{fit_texts}".encode()
    )[:16]


def meta_values(
    settings: Settings,
    state: freshness.State,
    rows: int,
    hnsw: tuple[str, int],
    counts: Counts,
    checksums: Mapping[str, str],
    invalid: list[Invalid],
    fit: Mapping[str, object],
) -> dict[str, object]:
    """Everything `index_meta` records about a build or refresh that reached `state`;
    `checksums` by file name (vectors.MATRIX, IDS, WORDPIECE); `invalid`: every file
    the index leaves out now; `fit`: the token weights' (`fitting.meta_values`)."""
    return {
        **fit,
        "invalid": json.dumps(
            sorted(invalid, key=lambda i: (i["path"], i["reason"])),
            ensure_ascii=False,
            separators=(",", ":"),
        ),
        **{store.CHECKSUM_META[name]: value for name, value in checksums.items()},
        "counts": counts.to_json(),
        "schema_version": store.SCHEMA_VERSION,
        "tokenizer": settings.tokenizer,
        "source_hash": state.source_hash,
        "kb_path": settings.kb_path,
        "built_by": settings.clone,
        "embedding_model": settings.model_id,
        "embedding_dims": settings.dims,
        "chunker_version": store.CHUNKER_VERSION,
        "vector_sha256": hnsw[0],
        "hnsw_size": hnsw[1],
        "vector_rows": rows,
        "indexed_at": ids.now_iso(),
        "corpus_revision": corpus_revision(state.source_hash, settings, fit["fit_texts"]),
        "lexical": settings.lexical,
        "tree": state.tree,
        "dirty": state.dirty_json(),
        "stamps": state.stamps_json(),
        "index_stamp": state.index_stamp,
        "staged": state.staged_json(),
    }
