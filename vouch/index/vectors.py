"""The vector half of the derived index: a float32 matrix, searched exactly.

- `vectors.f32`: one L2-normalised float32 row per chunk (`chunks.vec_row`), raw, so a
  process memory-maps it and answers with one exact matrix product — cheaper than
  loading a graph file for a single query, and the only vector search when the
  optional graph (`vouch.index.graph`, hnswlib) is not installed.
- `vectors.ids`: int64 chunk id per row, -1 for a free row, so an exact search maps rows
  to chunks without a SQL round trip.
- `vectors.words`: the model's WordPiece table (`vouch.wordpiece`), so a cold query is
  tokenized without loading the `tokenizers` library; absent for other tokenizers.
- `vectors.hnsw`: the optional graph, written and read by `vouch.index.graph`.

The other files' checksums (`checksum`) are recorded in `index_meta` too (schema 4),
because same-size garbage passes the size check every open makes: the matrix and ids are
verified on their first use in a process (a cold vector search), vectors.words before a
query is tokenized with it. Refreshes rewrite matrix rows in place, so each
verifies the files before writing and records their new checksums in the same
transaction; a refresh that dies in between leaves a mismatch, hence a rebuild.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MATRIX = "vectors.f32"
IDS = "vectors.ids"
HNSW = "vectors.hnsw"  # the graph's file (see vouch.index.graph)
WORDPIECE = "vectors.words"
NO_TABLE = "none"  # the recorded vectors.words checksum of a model without a table
_BLOCK = 2048  # 8-byte words in a `checksum` block (16 KiB)


class VectorFilesBroken(Exception):
    """A vector file is missing, of the wrong size or not what was recorded; the message
    names the file (for `vouch index status`)."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def checksum(data: np.ndarray) -> str:
    """A checksum of an array's bytes cheap enough for every cold vector search.

    sha256 of the 15 MB matrix of 10k claims takes 10-40 ms (with or without the CPU's
    SHA instructions); this takes ~1 ms more than the page faults the search pays anyway:
    the bytes as 64-bit words in 16 KiB blocks, summed (mod 2^64) per block and per
    position across blocks, and those sums hashed with the size. A changed word changes
    its block's sum and its position's sum, so garbage, a torn or stale row, a swap of
    unequal words and a wrong length are all caught; unlike sha256 it would not resist
    a file crafted to pass, which a cache in the user's own directory need not.
    """
    import numpy as np

    raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    size = int(raw.size)
    words = raw[: size - size % 8].view(np.uint64)
    full = words.size - words.size % _BLOCK
    blocks = words[:full].reshape(-1, _BLOCK)
    digest = hashlib.sha256(size.to_bytes(8, "little"))
    digest.update(blocks.sum(axis=0, dtype=np.uint64).tobytes())
    digest.update(blocks.sum(axis=1, dtype=np.uint64).tobytes())
    digest.update(raw[full * 8 :].tobytes())  # the last partial block, byte for byte
    return digest.hexdigest()


def file_checksum(path: Path) -> str:
    """`checksum` of a file's bytes (memory-mapped: no copy)."""
    import numpy as np

    if path.stat().st_size == 0:
        return checksum(np.zeros(0, dtype=np.uint8))
    return checksum(np.memmap(path, dtype=np.uint8, mode="r"))


def matrix_checksums(directory: Path) -> dict[str, str]:
    """The checksums of vectors.f32 and vectors.ids as they are on disk, for index_meta."""
    return {MATRIX: file_checksum(directory / MATRIX), IDS: file_checksum(directory / IDS)}


def verify_matrix(matrix: np.ndarray, ids: np.ndarray, expected: Mapping[str, str]) -> None:
    """Raise VectorFilesBroken unless the mapped files match their recorded checksums."""
    for name, data in ((MATRIX, matrix), (IDS, ids)):
        if checksum(data) != expected[name]:
            raise VectorFilesBroken(f"{name} does not match its recorded checksum")


def verify_files(directory: Path, rows: int, dims: int, expected: Mapping[str, str]) -> None:
    """verify_matrix over the files in `directory` (before a refresh rewrites rows)."""
    matrix, ids = open_matrix(directory, rows, dims)
    try:
        verify_matrix(matrix, ids, expected)
    except OSError as exc:
        raise VectorFilesBroken(f"cannot read the vector files: {exc}") from exc


def wordpiece_checksum(directory: Path) -> str:
    """`checksum` of vectors.words, or NO_TABLE when there is none."""
    try:
        return file_checksum(directory / WORDPIECE)
    except FileNotFoundError:
        return NO_TABLE


def write_all(directory: Path, matrix: np.ndarray, chunk_ids: np.ndarray) -> None:
    """Write the matrix and its ids for a fresh index."""
    import numpy as np

    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    (directory / MATRIX).write_bytes(matrix.tobytes())
    (directory / IDS).write_bytes(np.ascontiguousarray(chunk_ids, dtype=np.int64).tobytes())


def write_wordpiece(directory: Path, text: str | None) -> str:
    """Store (or, for a model without one, remove) the query tokenizer's table; returns
    its checksum for index_meta (`wordpiece_checksum` of what was written)."""
    path = directory / WORDPIECE
    if text is None:
        path.unlink(missing_ok=True)
        return NO_TABLE
    import numpy as np

    data = text.encode("utf-8")
    tmp = directory / (WORDPIECE + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return checksum(np.frombuffer(data, dtype=np.uint8))


def check_sizes(directory: Path, rows: int, dims: int, graph_size: int | None) -> None:
    """Cheap consistency check (stat only) of the files against index_meta; the graph's
    only when the index records one (`graph_size` None: it has none)."""
    expected = {MATRIX: rows * dims * 4, IDS: rows * 8}
    if graph_size is not None:
        expected[HNSW] = graph_size
    for name, size in expected.items():
        try:
            actual = (directory / name).stat().st_size
        except OSError as exc:
            raise VectorFilesBroken(f"{name} is missing") from exc
        if actual != size:
            raise VectorFilesBroken(f"{name} has {actual} bytes, index_meta says {size}")


def open_matrix(directory: Path, rows: int, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """Memory-mapped (matrix, ids); empty arrays for an empty index."""
    import numpy as np

    if rows == 0 or dims == 0:
        return np.zeros((0, dims), dtype=np.float32), np.zeros(0, dtype=np.int64)
    try:
        matrix = np.memmap(directory / MATRIX, dtype=np.float32, mode="r", shape=(rows, dims))
        ids = np.memmap(directory / IDS, dtype=np.int64, mode="r", shape=(rows,))
    except (OSError, ValueError) as exc:  # shorter than index_meta says: changed under us
        raise VectorFilesBroken(f"cannot map the vector files: {exc}") from exc
    return matrix, ids


def write_rows(
    directory: Path, dims: int, rows: Iterable[int], vecs: np.ndarray, chunk_ids: Iterable[int]
) -> None:
    """Write vectors (and their chunk ids) at the given rows, growing the files as needed."""
    import numpy as np

    rows = list(rows)
    ids = list(chunk_ids)
    vecs = np.ascontiguousarray(vecs, dtype=np.float32)
    with open(directory / MATRIX, "r+b") as mat, open(directory / IDS, "r+b") as idf:
        for n, row in enumerate(rows):
            mat.seek(row * dims * 4)
            mat.write(vecs[n].tobytes())
            idf.seek(row * 8)
            idf.write(np.int64(ids[n]).tobytes())


def clear_rows(directory: Path, dims: int, rows: Iterable[int]) -> None:
    """Zero freed rows and mark them -1, so an exact search can never return them."""
    import numpy as np

    zero = bytes(dims * 4)
    minus_one = np.int64(-1).tobytes()
    with open(directory / MATRIX, "r+b") as mat, open(directory / IDS, "r+b") as idf:
        for row in rows:
            mat.seek(row * dims * 4)
            mat.write(zero)
            idf.seek(row * 8)
            idf.write(minus_one)


def exact_top(
    matrix: np.ndarray, ids: np.ndarray, query: np.ndarray, k: int, rows: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """(chunk id, cosine) of the k best rows, optionally among `rows` only."""
    import numpy as np

    if k <= 0 or matrix.shape[0] == 0:
        return []
    if rows is not None:
        rows = rows[(rows >= 0) & (rows < matrix.shape[0])]
        if rows.size == 0:
            return []
        scores = np.asarray(matrix[rows] @ query, dtype=np.float32)
        cids = np.asarray(ids[rows])
    else:
        scores = np.asarray(matrix @ query, dtype=np.float32)
        cids = np.asarray(ids)
    scores = np.where(cids >= 0, scores, -np.inf)
    k = min(k, int(np.count_nonzero(cids >= 0)))
    if k == 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return list(zip(cids[top].tolist(), scores[top].tolist(), strict=True))
