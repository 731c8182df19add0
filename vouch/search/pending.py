"""Open proposals as search candidates (`--include-pending`).

Pending knowledge lives on proposal branches, not in the checked-out files the index is
built from, so it is searched here, in memory: each open proposal's object is read from
its commit, chunked as the index would chunk it, filtered, and merged into both channel
lists — into the vector list by cosine (same model, same scale as the index's hits),
into the lexical list by how much of the query a chunk covers (BM25 scores of a
different corpus are not comparable; coverage is computed the same way for both).
Pending hits carry `pending: true` and their `proposal_id`; their chunk ids are
negative so they never collide with the index's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vouch.index.filters import Filters
from vouch.index.lexical import LexicalHit
from vouch.index.rows import ChunkInfo
from vouch.search.access import passes
from vouch.search.snippet import make_snippet
from vouch.search.weighting import content_stems, coverage

if TYPE_CHECKING:
    from vouch.store.kb import KB


@dataclass(frozen=True)
class PendingChunk:
    info: ChunkInfo
    proposal_id: str
    obj: dict[str, Any] | None = None  # the proposed object (its evidence, confidence)


def _load(kb: KB, warm: dict[str, Any]) -> list[PendingChunk]:
    from vouch.gate.pending import open_proposals
    from vouch.index import chunking
    from vouch.kinds import KINDS

    chunks: list[PendingChunk] = []
    key: Any = ("search-pending", str(kb.dir))
    cache: dict[str, list[PendingChunk]] = warm.setdefault(key, {})
    for proposal in open_proposals(kb):
        kind = KINDS.get(proposal.kind)
        if kind is None or proposal.kind not in chunking.INDEXED_KINDS:
            continue
        if proposal.commit not in cache:
            path = kb.rel(kind.path_for(proposal.object_id))
            blob = kb.repo.blob_at(proposal.commit, path)
            found: list[PendingChunk] = []
            if blob:
                obj = kind.load(kb.repo.read_blob(blob).decode("utf-8"), where=path)
                doc = chunking.object_doc(proposal.kind, obj, path)
                for c in doc.chunks:
                    info = ChunkInfo(
                        chunk_id=0,
                        kind=doc.kind,
                        id=doc.object_id,
                        title=doc.title,
                        path=path,
                        type=doc.type,
                        status=doc.status,
                        format=doc.format,
                        section=c.section,
                        page=c.page,
                        chunk_index=c.chunk_index,
                        total_chunks=c.total_chunks,
                        start_line=c.start_line,
                        end_line=c.end_line,
                        tags=list(doc.tags),
                        locator=None,
                        text=c.text,
                    )
                    found.append(PendingChunk(info, proposal.id, obj))
            cache[proposal.commit] = found
        chunks.extend(cache[proposal.commit])
    return [
        PendingChunk(pc.info._replace(chunk_id=-n), pc.proposal_id, pc.obj)
        for n, pc in enumerate(chunks, 1)
    ]


class Pending:
    """The open proposals matching the filters, ready to merge into a search."""

    def __init__(self, kb: KB, f: Filters, warm: dict[str, Any]):
        self.chunks = {pc.info.chunk_id: pc for pc in _load(kb, warm) if passes(pc.info, f)}

    def revision(self) -> str:
        ids = sorted(f"{pc.proposal_id}:{pc.info.id}" for pc in self.chunks.values())
        return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:8]

    def merge_lexical(
        self, query: str, hits: list[LexicalHit], texts: dict[int, str], depth: int
    ) -> list[LexicalHit]:
        """Pending chunks that share a word with the query, slotted in by coverage."""
        wanted = set(content_stems(query))
        extra = []
        for cid, pc in self.chunks.items():
            if wanted & set(content_stems(pc.info.text)):
                cov = coverage(query, [pc.info.text])
                extra.append((cov, LexicalHit(cid, 0.0, make_snippet(pc.info.text, query))))
        if not extra:
            return hits
        keyed = [(coverage(query, [texts.get(h.chunk_id, "")]), h) for h in hits]
        # stable: among equal coverage the index's BM25 order is kept, pending after it
        merged = sorted([*keyed, *extra], key=lambda ch: -ch[0])
        return [h for _, h in merged][:depth]

    def merge_vector(
        self,
        qvec: Any,
        hits: Sequence[tuple[int, float]],
        embed: Callable[[list[str]], Any],
        depth: int,
    ) -> list[tuple[int, float]]:
        import numpy as np

        if not self.chunks:
            return list(hits)
        ids = list(self.chunks)
        vecs = embed([self.chunks[c].info.text for c in ids])
        sims = np.asarray(vecs, dtype=np.float32) @ np.asarray(qvec, dtype=np.float32)
        merged = [*hits, *zip(ids, (float(s) for s in sims), strict=True)]
        merged.sort(key=lambda h: -h[1])
        return merged[:depth]

    def info(self, chunk_id: int) -> ChunkInfo | None:
        pc = self.chunks.get(chunk_id)
        return pc.info if pc else None

    def object_of(self, chunk_id: int) -> dict[str, Any] | None:
        pc = self.chunks.get(chunk_id)
        return pc.obj if pc else None

    def proposal_of(self, chunk_id: int) -> str | None:
        pc = self.chunks.get(chunk_id)
        return pc.proposal_id if pc else None
