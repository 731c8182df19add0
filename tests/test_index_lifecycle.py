"""The index is a cache: missing, corrupt, stale or foreign, it heals or says why."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import git
from index_support import claim, commit, ids_of, index_dir, needs_hnswlib, release_knowledge

from vouch.errors import IndexCollision, IndexUnusable
from vouch.index import Index, index_status, rebuild_index
from vouch.store.kb import KB


@pytest.fixture
def knowledge(kb: KB) -> KB:
    return release_knowledge(kb)


def _counts_match_tables(index: Index) -> None:
    sql = index.conn.execute
    by_kind = dict(sql("SELECT kind, COUNT(*) FROM docs GROUP BY kind").fetchall())
    by_format = dict(sql("SELECT format, COUNT(*) FROM docs GROUP BY format").fetchall())
    chunks = sql("SELECT COUNT(*) FROM chunks").fetchone()[0]
    vecs = sql("SELECT COUNT(*) FROM chunks WHERE vec_row IS NOT NULL").fetchone()[0]
    assert index.counts() == {
        "documents": sum(by_kind.values()),
        "by_kind": by_kind,
        "by_format": by_format,
        "chunks": chunks,
        "vectors": vecs,
    }


def _search(kb: KB, query: str) -> list[str]:
    index = Index.open(kb)
    try:
        return ids_of(index, index.lexical(query))
    finally:
        index.close()


def test_builds_on_first_open_and_is_then_fresh(knowledge: KB) -> None:
    index = Index.open(knowledge)
    assert index.last_report is not None and index.last_report.mode == "rebuild"
    assert index.counts()["by_kind"] == {"claim": 2, "page": 1}
    assert index.ensure_fresh() is None
    index.close()
    assert index_status(knowledge)["state"] == "fresh"


def test_deleted_index_is_rebuilt(knowledge: KB) -> None:
    assert _search(knowledge, "invoices")
    import shutil

    shutil.rmtree(index_dir(knowledge))
    assert index_status(knowledge)["state"] == "missing"
    assert len(_search(knowledge, "invoices")) == 1


def test_garbage_database_is_rebuilt(knowledge: KB) -> None:
    _search(knowledge, "deploys")
    (index_dir(knowledge) / "search.db").write_bytes(b"this is not sqlite" * 100)
    for suffix in ("-wal", "-shm"):
        (index_dir(knowledge) / f"search.db{suffix}").unlink(missing_ok=True)
    assert index_status(knowledge)["state"] == "corrupt"
    assert len(_search(knowledge, "deploys")) == 1
    assert index_status(knowledge)["state"] == "fresh"


@needs_hnswlib
def test_truncated_hnsw_is_rebuilt(knowledge: KB) -> None:
    _search(knowledge, "deploys")
    path = index_dir(knowledge) / "vectors.hnsw"
    path.write_bytes(path.read_bytes()[:100])
    assert index_status(knowledge)["state"] == "corrupt"
    index = Index.open(knowledge)
    assert index.last_report is not None and index.last_report.mode == "rebuild"
    assert index.load_graph()
    hits = index.vector(index.embed_query("rolling back a release"), 3)
    assert ids_of(index, hits)[0].startswith("release-guide")
    index.close()


@needs_hnswlib
def test_hnsw_with_wrong_checksum_is_regraphed_not_loaded(knowledge: KB) -> None:
    Index.open(knowledge).close()
    path = index_dir(knowledge) / "vectors.hnsw"
    size = path.stat().st_size
    path.write_bytes(b"\xff" * size)  # same size: only the checksum can tell
    index = Index.open(knowledge)
    assert index.load_graph()  # rebuilt from the matrix instead of handing hnswlib garbage
    assert ids_of(index, index.vector(index.embed_query("invoices database"), 1))[0].startswith(
        "the-billing-service"
    )
    index.close()
    index = Index.open(knowledge)
    assert index.load_graph()
    index.close()


def test_missing_meta_key_is_rebuilt(knowledge: KB) -> None:
    Index.open(knowledge).close()
    conn = sqlite3.connect(index_dir(knowledge) / "search.db")
    conn.execute("DELETE FROM index_meta WHERE key = 'tokenizer'")
    conn.commit()
    conn.close()
    assert index_status(knowledge)["state"] == "corrupt"
    index = Index.open(knowledge)
    assert index.last_report is not None and index.last_report.mode == "rebuild"
    assert index.meta["tokenizer"]
    index.close()


def test_results_follow_a_branch_checkout(knowledge: KB) -> None:
    assert _search(knowledge, "kubernetes") == []
    git(knowledge.root, "checkout", "-qb", "infra")
    claim(knowledge, "Kubernetes runs the staging cluster")
    commit(knowledge, "infra knowledge")
    assert len(_search(knowledge, "kubernetes")) == 1
    git(knowledge.root, "checkout", "-q", "main")
    index = Index.open(knowledge)
    assert index.lexical("kubernetes") == []
    _counts_match_tables(index)
    assert index.last_report is not None and index.last_report.mode == "refresh"
    assert index.last_report.removed == 1 and index.last_report.reindexed == 0
    index.close()


def test_refresh_touches_only_changed_objects(knowledge: KB) -> None:
    for n in range(20):
        claim(knowledge, f"Service number {n} exposes a health endpoint")
    commit(knowledge)
    Index.open(knowledge).close()

    added = claim(knowledge, "The cache is warmed every night by cron")  # one approval
    commit(knowledge)
    index = Index.open(knowledge)
    report = index.last_report
    assert report is not None and report.mode == "refresh"
    assert (report.reindexed, report.removed, report.embedded) == (1, 0, 1)
    assert report.documents == 24
    _counts_match_tables(index)
    assert ids_of(index, index.lexical("warmed cron")) == [added["id"]]
    index.close()

    # a hand edit in the work tree, not committed
    path = next((knowledge.dir / "claims").rglob(f"{added['id']}.yaml"))
    path.write_text(path.read_text().replace("every night", "every night at 02:00 UTC"))
    index = Index.open(knowledge)
    report = index.last_report
    assert report is not None and (report.mode, report.reindexed) == ("refresh", 1)
    assert ids_of(index, index.lexical("02:00")) == [added["id"]]
    index.close()

    path.unlink()  # deleted by hand
    index = Index.open(knowledge)
    report = index.last_report
    assert report is not None and (report.reindexed, report.removed) == (0, 1)
    assert index.lexical("warmed") == []
    assert index.counts()["vectors"] == index.counts()["chunks"] == 22 + 2
    _counts_match_tables(index)
    index.close()


def test_refresh_reuses_vector_rows_and_matches_a_rebuild(knowledge: KB) -> None:
    index = Index.open(knowledge)
    before_rows = index.meta.vector_rows
    index.close()
    for n in range(3):
        path = next((knowledge.dir / "claims").rglob("deploys-*.yaml"))
        path.write_text(
            path.read_text()
            .replace("GitHub Actions", f"runner {n}")
            .replace(f"runner {n - 1}", f"runner {n}")
        )
        index = Index.open(knowledge)
        assert index.meta.vector_rows == before_rows  # freed rows are reused
        index.close()
    index = Index.open(knowledge)
    qvec = index.embed_query("which runner deploys")
    refreshed = [(h.chunk_id, round(h.score, 5)) for h in index.vector(qvec, 5)]
    texts = [c.text for c in index.chunks(c for c, _ in refreshed).values()]
    index.close()
    rebuild_index(knowledge)
    index = Index.open(knowledge)
    rebuilt = index.vector(qvec, 5)
    assert [round(h.score, 5) for h in rebuilt] == [s for _, s in refreshed]
    assert sorted(c.text for c in index.chunks(h.chunk_id for h in rebuilt).values()) == sorted(
        texts
    )
    index.close()


def test_auto_refresh_off_makes_stale_an_error(knowledge: KB, run_cli) -> None:
    Index.open(knowledge).close()
    cfg = knowledge.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("auto_refresh: true", "auto_refresh: false"))
    commit(knowledge, "config")
    Index.open(KB(knowledge.dir)).close()  # only config.yaml changed: no knowledge is stale
    claim(knowledge, "Invoices are archived after seven years")
    fresh = KB(knowledge.dir)  # config is cached per KB handle
    with pytest.raises(IndexUnusable) as err:
        Index.open(fresh)
    assert err.value.code == "E002" and err.value.exit_code == 1
    result = run_cli("index", "status", "--json", cwd=knowledge.root)
    assert result.code == 0 and result.json()["state"] == "stale"
    assert run_cli("index", "rebuild", cwd=knowledge.root).code == 0
    Index.open(KB(knowledge.dir)).close()  # fresh again: no error


def test_auto_refresh_off_is_not_stale_when_no_knowledge_changed(knowledge: KB, run_cli) -> None:
    # review: with auto_refresh off, editing a comment in config.yaml, or committing a
    # work-tree change the index already held, made every search E002 "knowledge files
    # changed" although no indexed object had
    cfg = knowledge.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("auto_refresh: true", "auto_refresh: false"))
    commit(knowledge, "config")
    claim(knowledge, "Invoices are archived after seven years")  # in the work tree
    assert run_cli("index", "rebuild", cwd=knowledge.root).code == 0
    cfg.write_text(cfg.read_text() + "# a comment\n")
    commit(knowledge, "the claim as it was indexed, and a comment")
    for _ in range(2):
        index = Index.open(KB(knowledge.dir))
        try:
            assert "the-billing-service" in " ".join(_ids(index, "invoices"))
            assert any("invoices-are-archived" in i for i in _ids(index, "archived"))
        finally:
            index.close()
    assert run_cli("index", "status", "--json", cwd=knowledge.root).json()["state"] == "fresh"
    result = run_cli("search", "archived", "--fts-only", "--json", cwd=knowledge.root)
    assert result.code == 0, result.err
    claim(knowledge, "Refunds take five days")  # now the knowledge did change
    result = run_cli("search", "archived", "--json", cwd=knowledge.root)
    assert result.code == 1 and result.json()["error"]["code"] == "E002"
    assert run_cli("index", "status", "--json", cwd=knowledge.root).json()["state"] == "stale"


def _ids(index: Index, query: str) -> list[str]:
    return ids_of(index, index.lexical(query))


def test_another_kbs_index_is_a_collision(knowledge: KB, run_cli) -> None:
    Index.open(knowledge).close()
    conn = sqlite3.connect(index_dir(knowledge) / "search.db")
    conn.execute("UPDATE index_meta SET value = '/elsewhere/.vouch' WHERE key = 'kb_path'")
    conn.commit()
    conn.close()
    with pytest.raises(IndexCollision) as err:
        Index.open(knowledge)
    assert err.value.code == "E003"
    result = run_cli("index", "rebuild", "--json", cwd=knowledge.root)
    assert result.code == 1 and '"E003"' in result.out
    assert index_status(knowledge)["state"] == "collision"
    assert run_cli("index", "rebuild", "--force", cwd=knowledge.root).code == 0
    assert index_status(knowledge)["state"] == "fresh"


def test_cli_rebuild_and_status(knowledge: KB, run_cli) -> None:
    result = run_cli("index", "rebuild", "--json", cwd=knowledge.root)
    assert result.code == 0, result.err
    data = result.json()
    assert data["ok"] is True and data["indexed"] == 3 and data["chunks"] >= 4
    status = run_cli("index", "status", "--json", cwd=knowledge.root).json()
    assert status["state"] == "fresh"
    assert status["counts"]["documents"] == 3
    assert status["model"]["dims"] == 256
    assert status["sizes"]["total"] > 0
    human = run_cli("index", "status", cwd=knowledge.root)
    assert "Index: fresh" in human.out
    claim(knowledge, "A new uncommitted claim")
    assert run_cli("index", "status", "--json", cwd=knowledge.root).json()["state"] == "stale"


def test_capabilities_and_call(knowledge: KB, run_cli) -> None:
    result = run_cli("call", "kb.index_rebuild", "{}", cwd=knowledge.root)
    assert result.code == 0, result.err
    assert '"indexed": 3' in result.out


def test_damage_while_open_is_e002_then_healed(knowledge: KB) -> None:
    index = Index.open(knowledge)
    (index_dir(knowledge) / "vectors.f32").write_bytes(b"")
    with pytest.raises(IndexUnusable) as err:
        index.vector(index.embed_query("invoices"), 3)
    assert err.value.code == "E002"
    index.close()
    index = Index.open(knowledge)
    assert index.last_report is not None and index.last_report.mode == "rebuild"
    assert len(index.vector(index.embed_query("invoices"), 3)) == 3
    index.close()


def test_vouch_search_works_after_the_index_is_deleted(knowledge: KB, run_cli) -> None:
    import shutil

    first = run_cli("search", "invoices", "--json", cwd=knowledge.root)
    assert first.code == 0, first.err
    shutil.rmtree(index_dir(knowledge))
    again = run_cli("search", "invoices", "--json", cwd=knowledge.root)
    assert again.code == 0, again.err
    assert "the-billing-service" in again.out
    assert (index_dir(knowledge) / "search.db").is_file()


def test_an_index_path_that_is_a_file_is_a_clear_error(knowledge: KB, run_cli) -> None:
    # review: a file where .vouch/index belongs was "internal error: FileExistsError"
    import shutil

    shutil.rmtree(index_dir(knowledge), ignore_errors=True)
    index_dir(knowledge).write_text("not a directory\n")
    result = run_cli("search", "invoices", "--json", cwd=knowledge.root)
    assert result.code == 2
    error = result.json()["error"]
    assert "is not a directory" in error["message"] and "internal error" not in error["message"]
    index_dir(knowledge).unlink()
    assert run_cli("search", "invoices", "--json", cwd=knowledge.root).code == 0
