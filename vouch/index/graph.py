"""The optional HNSW graph over the vector matrix (vectors.hnsw); the only importer of hnswlib.

hnswlib is an extra (`pip install 'vouch-git[hnsw]'`): it ships no wheels, so installing it
compiles C++ (about a minute, and a compiler). Without it every vector search is exact
over the memory-mapped matrix (`vectors.exact_top`), which bench/RESULTS.md ("Exact
vector search or the graph") measured fast enough for the sizes vouch is built for; the
graph pays off in a warm process (a server) at 100k chunks and more.

When hnswlib imports, a build writes the graph and a warm process queries through it
from its second search on. An index records whether it has one (`vector_sha256` is
NO_GRAPH when not), so the same index serves both environments without a rebuild: one
built with hnswlib opens where it is missing (the graph file is size-checked like the
others and otherwise left alone), and one built without it gains a graph the first time
a warm process that has hnswlib loads it.

Its sha256 is recorded in `index_meta` and checked before loading, because hnswlib
trusts its file and a malformed one can crash the process. An incremental refresh does
not rewrite it (that would cost more than the refresh): rows changed since it was
written are listed in `vec_dirty` and replayed from the matrix after loading.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vouch.index.vectors import HNSW as FILE
from vouch.index.vectors import VectorFilesBroken, sha256_file

if TYPE_CHECKING:
    import numpy as np

NO_GRAPH = "none"  # the recorded vector_sha256 of an index without a graph
ABSENT = (NO_GRAPH, 0)  # (sha256, size) as index_meta records no graph
M = 12
EF_CONSTRUCTION = 64
EF_SEARCH = 96
# Below this many vectors a warm process searches the matrix exactly: as fast as the
# graph there (top 400 of 20k rows ~1 ms, of 100k ~10 ms against ~1.4 through the graph)
# and exact (bench/RESULTS.md, issue 19).
EXACT_BELOW = 20_000


def pays(vector_rows: int) -> bool:
    """Whether a warm process over `vector_rows` vectors searches through the graph."""
    return vector_rows >= EXACT_BELOW


@functools.cache
def available() -> bool:
    """Whether hnswlib imports here (the `hnsw` extra is installed)."""
    try:
        import hnswlib  # noqa: F401
    except ImportError:
        return False
    return True


def _new(dims: int, capacity: int) -> Any:
    import hnswlib

    graph = hnswlib.Index(space="cosine", dim=dims)
    graph.init_index(max_elements=max(1, capacity), M=M, ef_construction=EF_CONSTRUCTION)
    return graph


def build(matrix: np.ndarray, ids: np.ndarray | None = None) -> Any:
    """A graph over the matrix's rows (label = row): all of them, or only the live ones
    (chunk id >= 0) when `ids` is given. Requires hnswlib."""
    import numpy as np

    graph = _new(matrix.shape[1], matrix.shape[0])
    rows = np.arange(matrix.shape[0]) if ids is None else np.nonzero(np.asarray(ids) >= 0)[0]
    if rows.size:
        graph.add_items(np.asarray(matrix[rows]), rows, num_threads=os.cpu_count() or 1)
    graph.set_ef(EF_SEARCH)
    return graph


def write(directory: Path, matrix: np.ndarray) -> tuple[str, int]:
    """For a fresh index: the graph over every row saved in `directory`, returning its
    (sha256, size) for index_meta; ABSENT, writing nothing, without hnswlib."""
    if not available() or matrix.shape[1] == 0:  # no hnswlib, or embedding is off
        return ABSENT
    return save(directory, build(matrix))


def save(directory: Path, graph: Any) -> tuple[str, int]:
    """Replace vectors.hnsw with `graph` (written aside, then renamed); returns
    (sha256, size) for `index_meta`."""
    tmp = directory / (FILE + ".tmp")
    graph.save_index(str(tmp))
    path = directory / FILE
    os.replace(tmp, path)
    return sha256_file(path), path.stat().st_size


def damage(directory: Path, recorded_sha: str) -> str | None:
    """Why vectors.hnsw is not the recorded graph (None: it is, or the index has none)."""
    if recorded_sha == NO_GRAPH:
        return None
    if sha256_file(directory / FILE) != recorded_sha:
        return f"{FILE} does not match its recorded sha256"
    return None


def load(
    directory: Path,
    dims: int,
    expected_sha: str,
    matrix: np.ndarray,
    ids: np.ndarray,
    dirty_rows: list[int],
) -> Any:
    """The graph, checked against its sha256, with rows changed since it was written
    replayed from the matrix. Raises VectorFilesBroken when the file does not verify
    (or the index records none)."""
    import hnswlib
    import numpy as np

    path = directory / FILE
    if expected_sha == NO_GRAPH:
        raise VectorFilesBroken("the index has no graph")
    try:
        found = damage(directory, expected_sha)
    except OSError as exc:
        raise VectorFilesBroken(f"{FILE} is unreadable: {exc}") from exc
    if found:
        raise VectorFilesBroken(found)
    graph = hnswlib.Index(space="cosine", dim=dims)
    graph.load_index(str(path), max_elements=max(1, matrix.shape[0]))
    if matrix.shape[0] > graph.get_max_elements():
        graph.resize_index(matrix.shape[0])
    live = [r for r in dirty_rows if r < matrix.shape[0] and ids[r] >= 0]
    dead = [r for r in dirty_rows if r >= matrix.shape[0] or ids[r] < 0]
    if live:  # one thread: the same graph in every process (threads insert in any order)
        graph.add_items(np.asarray(matrix[live]), np.asarray(live), num_threads=1)
    present = set(graph.get_ids_list()) if dead else set()
    for row in dead:
        if row in present:
            graph.mark_deleted(row)
    graph.set_ef(EF_SEARCH)
    return graph


def top(
    graph: Any, ids: np.ndarray, query: np.ndarray, k: int, breadth: int = 0
) -> list[tuple[int, float]] | None:
    """(chunk id, cosine) through the graph; None when it cannot answer (fewer live
    elements than asked for): the caller falls back to the exact search. `breadth`: when
    more than k, the first k of a top-`breadth` search (what over-fetching to filter
    keeps when the filter drops nothing)."""
    if k <= 0:
        return []
    wide = max(k, breadth)
    graph.set_ef(max(EF_SEARCH, wide))
    try:
        labels, distances = graph.knn_query(query, k=wide)
    except RuntimeError:
        return None
    rows = labels[0].astype("int64")
    inside = rows < ids.shape[0]
    cids = ids[rows[inside]]
    sims = 1.0 - distances[0][inside]
    live = cids >= 0
    return list(zip(cids[live][:k].tolist(), sims[live][:k].tolist(), strict=True))
