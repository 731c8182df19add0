"""`vouch eval` end to end, and the integrity of the shipped golden set."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from vouch.methods.demo import example_files

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "examples" / "golden"


def test_eval_on_a_corpus_directory(tmp_path: Path, run_cli: Any) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    ids = {}
    for path in example_files():
        (docs / path.name).write_bytes(path.read_bytes())
        ids[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "\n".join(
            json.dumps(row)
            for row in (
                {
                    "query": "roll back a billing release",
                    "relevant": [ids["deploy-runbook.md"]],
                    "group": "keyword",
                },
                {
                    "query": "duplicate payment events",
                    "relevant": [ids["incident-2026-03.txt"]],
                    "group": "keyword",
                },
                {"query": "where are invoices stored", "relevant": [ids["architecture-notes.md"]]},
            )
        )
        + "\n"
    )
    result = run_cli("eval", str(golden), "--corpus", str(docs), "--json")
    assert result.code == 0, result.err
    report = result.json()
    assert report["queries"] == 3 and report["groups"] == {"all": 3, "keyword": 2}
    assert set(report["modes"]) == {"fts", "vector", "hybrid"}
    for by_group in report["modes"].values():
        for metrics in by_group.values():
            assert set(metrics) == {"mrr@10", "recall@10", "ndcg@10"}
            assert all(0.0 <= v <= 1.0 for v in metrics.values())
    assert report["modes"]["hybrid"]["all"]["recall@10"] == 1.0
    table = run_cli("eval", str(golden), "--corpus", str(docs), "--modes", "fts,hybrid")
    assert table.code == 0
    assert table.out.splitlines()[0].split()[:3] == ["group", "mode", "MRR@10"]
    assert " vector " not in table.out


def test_eval_rejects_bad_input(tmp_path: Path, run_cli: Any) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x"}\n')
    docs = tmp_path / "docs"
    docs.mkdir()
    result = run_cli("eval", str(bad), "--corpus", str(docs), "--json")
    assert result.code == 1 and result.json()["error"]["code"] == "E100"
    missing = run_cli("eval", str(tmp_path / "nope.jsonl"), "--corpus", str(docs))
    assert missing.code == 1


def test_the_shipped_golden_set_is_consistent() -> None:
    """Every relevant id is the sha256 of a shipped document, every document has a
    licence row, and no paraphrase shares a content word with its document."""
    from search_support import build_golden as load_build_golden

    build_golden = load_build_golden()
    docs = {p.name: p.read_bytes() for p in (GOLDEN / "docs").iterdir()}
    by_id = {hashlib.sha256(data).hexdigest(): name for name, data in docs.items()}
    rows = [json.loads(line) for line in (GOLDEN / "golden.jsonl").read_text().splitlines()]
    groups: dict[str, int] = {}
    for row in rows:
        groups[row["group"]] = groups.get(row["group"], 0) + 1
        assert [by_id[r] for r in row["relevant"]] == [row["doc"]]
        if row["group"] == "paraphrase":
            text = docs[row["doc"]].decode()
            assert not build_golden.content_words(row["query"]) & build_golden.content_words(
                text
            ), row
    assert groups["paraphrase"] >= 40 and groups["summary"] >= 100
    licences = (GOLDEN / "LICENSES.tsv").read_text().splitlines()[1:]
    assert {line.split("\t")[0] for line in licences} == set(docs)
    assert all(line.split("\t")[3] for line in licences)
    assert sum(len(d) for d in docs.values()) < 2_000_000


def test_an_eval_corpus_given_relative_paths_stays_out_of_the_enclosing_repo(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """build_corpus_kb with a relative work directory inside another repository makes its
    own repository there; it once ran `git init` relative to itself and committed the
    corpus into the enclosing repository."""
    import subprocess

    from vouch.search.evalrun import build_corpus_kb

    outer = tmp_path / "outer"
    outer.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=outer, check=True)
    docs = outer / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha text.\n")
    monkeypatch.chdir(outer)
    kb = build_corpus_kb(Path("docs"), Path("out/kb"))
    assert kb.root == (outer / "out" / "kb").resolve()
    assert (outer / "out" / "kb" / ".git").is_dir()
    head = subprocess.run(["git", "rev-list", "--all"], cwd=outer, capture_output=True, text=True)
    assert head.stdout == ""  # nothing committed in the enclosing repository
