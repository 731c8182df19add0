"""The HNSW graph is optional (the `hnsw` extra): without hnswlib every vector search is
exact, and one index serves environments with and without it — no false "corrupt", no
rebuild. The environment without it is a subprocess in which `import hnswlib` fails."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from typing import Any

import pytest
from index_support import claim, commit, ids_of, index_dir, needs_hnswlib, release_knowledge

from vouch.index import Index, graph, index_status, vectors
from vouch.index.filters import Filters
from vouch.index.status import vector_search
from vouch.search import access
from vouch.store.kb import KB

QUERY = "how do I roll back a release"
pytestmark = needs_hnswlib  # every test here compares hnswlib's presence with its absence

# The package hidden as if the extra were not installed (import hnswlib -> ImportError).
_SCRIPT = """
import contextlib, io, json, sys
from pathlib import Path
sys.modules["hnswlib"] = None
from vouch.cli import main
from vouch.index import Index
from vouch.store.kb import KB
out = []
for args in json.loads(sys.argv[1]):
    if args == ["warm"]:  # a warm process: load_graph, then a vector query
        index = Index.open(KB.open(Path(sys.argv[2])))
        hits = index.vector(index.embed_query(sys.argv[3]), 1)
        top = index.chunks([hits[0].chunk_id])[hits[0].chunk_id].id
        out.append([0, [index.load_graph(), top]])
        index.close()
        continue
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        code = main([*args, "--json", "--kb", sys.argv[2]])
    out.append([code, json.loads(printed.getvalue())])
print(json.dumps([out, sys.modules["hnswlib"] is not None]))
"""


def _without_hnswlib(kb: KB, *commands: list[str]) -> list[tuple[int, Any]]:
    """Run vouch commands in one process that cannot import hnswlib: (exit status,
    JSON output) of each."""
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(commands), str(kb.root), QUERY],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    results, imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert not imported
    return [(code, output) for code, output in results]


def _pending_rows(kb: KB) -> int:
    conn = sqlite3.connect(index_dir(kb) / "search.db")
    try:
        return int(conn.execute("SELECT COUNT(*) FROM vec_dirty").fetchone()[0])
    finally:
        conn.close()


def test_without_hnswlib_search_is_exact_and_a_later_hnswlib_adds_the_graph(kb: KB) -> None:
    release_knowledge(kb)
    rebuilt, status, found, warm = _without_hnswlib(
        kb,
        ["index", "rebuild"],
        ["index", "status"],
        ["search", QUERY, "--vec-only"],
        ["warm"],
    )
    assert rebuilt[0] == 0 and rebuilt[1]["mode"] == "rebuild"
    assert not (index_dir(kb) / vectors.HNSW).exists()
    assert status[1]["state"] == "fresh"
    assert status[1]["vector_search"] == "exact"
    assert status[1]["graph"] == {"installed": False, "built": False}
    assert found[1]["results"][0]["id"].startswith("release-guide")
    assert warm[1][0] is False and warm[1][1].startswith("release-guide")  # exact, even warm

    claim(kb, "The office coffee machine is descaled on Fridays")
    commit(kb)
    (searched, _), (_, after) = _without_hnswlib(kb, ["search", QUERY], ["index", "status"])
    assert searched == 0 and after["state"] == "fresh"
    assert _pending_rows(kb) == 0  # no graph to replay changed rows onto

    # the same index where hnswlib is installed: no rebuild; a warm load builds the graph
    assert index_status(kb)["state"] == "fresh"
    index = Index.open(kb)
    try:
        assert index.last_report is None
        assert index.load_graph()
        assert ids_of(index, index.vector(index.embed_query(QUERY), 1))[0].startswith(
            "release-guide"
        )
    finally:
        index.close()
    status = index_status(kb)
    # built, and a warm process searches it from graph.EXACT_BELOW vectors on; this
    # small index stays exact (as fast there, and exact)
    assert status["state"] == "fresh" and status["vector_search"] == "exact"
    assert status["graph"] == {"installed": True, "built": True}
    assert vector_search(256, True, graph.EXACT_BELOW)["vector_search"] == "graph"
    assert vector_search(256, True, graph.EXACT_BELOW - 1)["vector_search"] == "exact"


def test_an_index_with_a_graph_serves_where_hnswlib_is_missing(kb: KB) -> None:
    release_knowledge(kb)
    Index.open(kb).close()  # built here, with hnswlib: it has a graph
    path = index_dir(kb) / vectors.HNSW
    path.write_bytes(random.Random(0).randbytes(path.stat().st_size))  # damaged, same size
    claim(kb, "The office coffee machine is descaled on Fridays")
    commit(kb)
    (_, before), (searched, found), (_, after) = _without_hnswlib(
        kb, ["index", "status"], ["search", QUERY, "--vec-only"], ["index", "status"]
    )
    # nothing there reads the graph, so nothing there calls it corrupt or rebuilds
    assert before["state"] == "stale" and after["state"] == "fresh"
    assert after["graph"] == {"installed": False, "built": True}
    assert after["vector_search"] == "exact"
    assert searched == 0 and found["results"][0]["id"].startswith("release-guide")
    assert path.exists() and after["hnsw_pending_rows"] > 0  # the refresh kept the graph

    # where hnswlib is installed the damage is seen, and the warm load repairs it
    assert index_status(kb)["state"] == "corrupt"
    index = Index.open(kb)
    try:
        assert index.load_graph()
    finally:
        index.close()
    assert index_status(kb)["state"] == "fresh"


def test_a_warm_process_searches_a_small_index_exactly(kb: KB) -> None:
    """Below graph.EXACT_BELOW vectors the exact product is as fast as the graph and
    exact: a warm process never loads the graph there."""
    release_knowledge(kb)
    warm: dict[str, object] = {}
    for _ in range(3):
        searcher = access.open_index(kb, warm)
        hits = searcher.vector(QUERY, 5, Filters.of(kinds=("claim", "page")))
        assert hits
    assert searcher.searches > 1 and searcher.index._graph is None
    assert not searcher.index.graph_pays()


def test_a_damaged_index_fails_the_graph_load_as_e002(kb: KB) -> None:
    """A read that fails while a warm process loads the graph is the index's damage
    (E002, rebuilt on the next open), never a traceback."""
    from vouch.errors import IndexUnusable

    release_knowledge(kb)
    index = Index.open(kb)
    try:
        index.conn.execute("DROP TABLE vec_dirty")
        with pytest.raises(IndexUnusable):
            index.load_graph()
    finally:
        index.close()
