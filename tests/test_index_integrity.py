"""Every derived file the index reads is checked against what the build recorded: same-size
garbage is reported as corrupt (naming the file) and healed, never searched."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from index_support import claim, ids_of, index_dir, needs_hnswlib, release_knowledge

from vouch.errors import IndexUnusable
from vouch.index import Index, index_status, rebuild_index, vectors
from vouch.index import refresh as refresh_module
from vouch.store.kb import KB

QUERY = "how do I roll back a release"


@pytest.fixture
def knowledge(kb: KB) -> KB:
    return release_knowledge(kb, "Payments retry three times before paging the on-call engineer")


def _garble(path: Path, seed: int = 0) -> None:
    """Same-size garbage: only a checksum can tell."""
    size = path.stat().st_size
    garbage = random.Random(seed).randbytes(size)
    assert garbage != path.read_bytes()
    path.write_bytes(garbage)
    assert path.stat().st_size == size


def _vector_search(run_cli: Any, kb: KB) -> list[tuple[str, float]]:
    """`vouch search --vec-only` as a user runs it (the cold path: the query is embedded
    while the index opens)."""
    result = run_cli("search", QUERY, "--vec-only", "--json", cwd=kb.root)
    assert result.code == 0, result.err
    return [(r["id"], r["score_breakdown"]["vector"]) for r in result.json()["results"]]


def _status(run_cli: Any, kb: KB) -> dict[str, Any]:
    result = run_cli("index", "status", "--json", cwd=kb.root)
    assert result.code == 0, result.err
    data: dict[str, Any] = result.json()
    assert data == {**index_status(KB(kb.dir)), "sizes": data["sizes"]}  # kb.index_status
    return data


@pytest.mark.parametrize("name", [vectors.MATRIX, vectors.IDS, vectors.WORDPIECE])
def test_same_size_garbage_is_corrupt_and_the_next_search_heals_it(
    knowledge: KB, run_cli: Any, name: str
) -> None:
    expected = _vector_search(run_cli, knowledge)
    assert expected[0][0].startswith("release-guide")
    assert _status(run_cli, knowledge)["state"] == "fresh"

    _garble(index_dir(knowledge) / name)
    status = _status(run_cli, knowledge)
    assert status["state"] == "corrupt"
    assert name in status["reason"] and "checksum" in status["reason"]

    assert _vector_search(run_cli, knowledge) == expected
    assert _status(run_cli, knowledge)["state"] == "fresh"


def test_garbage_matrix_is_rebuilt_when_the_index_opens(knowledge: KB) -> None:
    Index.open(knowledge).close()
    _garble(index_dir(knowledge) / vectors.MATRIX)
    index = Index.open(knowledge, meanwhile=lambda ix: ix.embed_query(QUERY))
    try:
        assert index.last_report is not None and index.last_report.mode == "rebuild"
        hits = index.vector(index.embed_query(QUERY), 1)
        assert ids_of(index, hits)[0].startswith("release-guide")
    finally:
        index.close()


def test_damage_found_after_opening_is_e002_then_rebuilt(knowledge: KB) -> None:
    # without a query embedded while it opened, the matrix is verified at first use:
    # too late to rebuild under results already handed out, so E002 — and the next
    # freshness check rebuilds (a warm server's next search)
    index = Index.open(knowledge)
    _garble(index_dir(knowledge) / vectors.IDS)
    try:
        with pytest.raises(IndexUnusable) as err:
            index.vector(index.embed_query(QUERY), 3)
        assert err.value.code == "E002" and vectors.IDS in err.value.message
        report = index.ensure_fresh()
        assert report is not None and report.mode == "rebuild"
        assert ids_of(index, index.vector(index.embed_query(QUERY), 1))[0].startswith(
            "release-guide"
        )
    finally:
        index.close()


@needs_hnswlib
def test_garbage_graph_is_reported_and_rebuilt_from_the_matrix(knowledge: KB) -> None:
    Index.open(knowledge).close()
    _garble(index_dir(knowledge) / vectors.HNSW)
    status = index_status(knowledge)
    assert status["state"] == "corrupt" and vectors.HNSW in status["reason"]
    index = Index.open(knowledge)
    try:  # a cold search never reads the graph; a warm one checks it before loading
        assert index.load_graph()
        assert ids_of(index, index.vector(index.embed_query(QUERY), 1))[0].startswith(
            "release-guide"
        )
    finally:
        index.close()
    assert index_status(knowledge)["state"] == "fresh"


def test_a_refresh_does_not_carry_damage_forward(knowledge: KB) -> None:
    # a refresh rewrites rows in place and records new checksums: over a damaged matrix
    # it would bless the garbage, so it verifies first and a rebuild happens instead
    Index.open(knowledge).close()
    _garble(index_dir(knowledge) / vectors.MATRIX)
    claim(knowledge, "Rollbacks are announced in the release channel")
    index = Index.open(knowledge)  # a lexical caller: nothing read the matrix yet
    try:
        assert index.last_report is not None and index.last_report.mode == "rebuild"
        found = _top(index)
    finally:
        index.close()
    assert index_status(knowledge)["state"] == "fresh"
    rebuild_index(knowledge)
    index = Index.open(knowledge)
    try:
        assert _top(index) == found
    finally:
        index.close()


def _top(index: Index) -> list[tuple[str, float]]:
    hits = index.vector(index.embed_query(QUERY), 5)
    return list(zip(ids_of(index, hits), [round(h.score, 5) for h in hits], strict=True))


def test_the_next_refresh_rewrites_a_damaged_table(knowledge: KB) -> None:
    Index.open(knowledge).close()
    path = index_dir(knowledge) / vectors.WORDPIECE
    good = path.read_bytes()
    _garble(path)
    assert index_status(knowledge)["state"] == "corrupt"
    claim(knowledge, "Rollbacks are announced in the release channel")
    index = Index.open(knowledge)  # lexical: no query tokenized, only the refresh
    assert index.last_report is not None and index.last_report.mode == "refresh"
    index.close()
    assert path.read_bytes() == good
    assert index_status(knowledge)["state"] == "fresh"


class _Crash(BaseException):
    pass


def test_a_refresh_that_dies_before_committing_leaves_a_rebuild(
    knowledge: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    Index.open(knowledge).close()
    path = next((knowledge.dir / "claims").rglob("payments-*.yaml"))
    path.write_text(path.read_text().replace("three times", "five times"))

    def crash(*args: Any, **kwargs: Any) -> None:
        raise _Crash  # after the rows were rewritten, before index_meta records them

    with monkeypatch.context() as mp:
        mp.setattr(refresh_module, "meta_values", crash)
        with pytest.raises(_Crash):
            Index.open(KB(knowledge.dir))
    assert "checksum" in index_status(knowledge)["reason"]
    index = Index.open(KB(knowledge.dir))
    try:
        assert index.last_report is not None and index.last_report.mode == "rebuild"
        assert ids_of(index, index.lexical("five times")) == [path.stem]
    finally:
        index.close()


def test_a_refresh_by_another_process_is_not_damage(knowledge: KB) -> None:
    # this process opened the index before another one refreshed it: the files then
    # match the checksums committed since, not the ones this load read
    mine = Index.open(knowledge)
    claim(knowledge, "Rollbacks are announced in the release channel")
    other = Index.open(KB(knowledge.dir))
    assert other.last_report is not None and other.last_report.mode == "refresh"
    other.close()
    try:
        hits = mine.vector(mine.embed_query("release channel announcements"), 1)
        assert ids_of(mine, hits)[0].startswith("rollbacks-are-announced")
    finally:
        mine.close()


def test_an_index_from_before_checksums_is_stale_not_corrupt(knowledge: KB) -> None:
    import sqlite3

    Index.open(knowledge).close()
    conn = sqlite3.connect(index_dir(knowledge) / "search.db")
    conn.execute("UPDATE index_meta SET value = '3' WHERE key = 'schema_version'")
    conn.execute(
        "DELETE FROM index_meta WHERE key IN ('matrix_checksum', 'ids_checksum', 'words_checksum')"
    )
    conn.commit()
    conn.close()
    status = index_status(knowledge)
    assert status["state"] == "stale" and "schema_version" in status["reason"]
    index = Index.open(knowledge)
    assert index.last_report is not None and index.last_report.mode == "rebuild"
    index.close()
    assert index_status(knowledge)["state"] == "fresh"


def test_checksum_catches_what_a_size_check_cannot() -> None:
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((300, 256)).astype(np.float32)
    base = vectors.checksum(matrix)
    assert vectors.checksum(matrix.copy()) == base
    swapped = matrix.copy()
    swapped[[3, 200]] = swapped[[200, 3]]  # two rows trade places
    within = matrix.copy()
    within[7, [0, 1]] = within[7, [1, 0]]  # two values in one row
    flipped = matrix.copy()
    flipped.view(np.uint32)[150, 17] ^= 1  # one bit
    zeroed = matrix.copy()
    zeroed[299] = 0  # the last, partial block
    for changed in (swapped, within, flipped, zeroed, matrix[:299]):
        assert vectors.checksum(changed) != base
