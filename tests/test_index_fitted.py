"""Token weights fitted to the knowledge base (vouch.embed.fitted, vouch.index.fitting):
one fit per index, shared by documents, queries, refreshes and pending proposals."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
from index_support import claim, commit, index_dir

from vouch.embed import fitted
from vouch.embed import model as embed
from vouch.index import Index
from vouch.index.store import DB_NAME
from vouch.kinds import KINDS
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.search.engine import SearchRequest, search
from vouch.store.kb import KB

TOPICS = [
    "invoices",
    "backups",
    "certificates",
    "rollbacks",
    "queues",
    "caches",
    "tokens",
    "mirrors",
    "quotas",
    "alerts",
]


def _claims(kb: KB, n: int, start: int = 0) -> list[str]:
    """`n` claims that all name the Acme platform, each about its own numbered topic."""
    texts = [
        f"The Acme platform keeps {TOPICS[i % len(TOPICS)]} for service number {i}"
        for i in range(start, start + n)
    ]
    for text in texts:
        claim(kb, text)
    commit(kb)
    return texts


def _model() -> embed.Embedder:
    return embed.embedder(embed.describe(embed.default_model_dir(), "default"))


def _token_df(kb: KB) -> dict[int, int]:
    conn = sqlite3.connect(index_dir(kb) / DB_NAME)
    try:
        return dict(conn.execute("SELECT token, df FROM token_df"))
    finally:
        conn.close()


def test_weights_favour_rare_tokens_and_never_vanish() -> None:
    df = np.array([0, 1, 10, 99, 100])
    w = fitted.weights(df, 100)
    assert np.all(np.diff(w) < 0)  # the rarer, the heavier
    assert w[-1] > 0  # a token in every text still counts: no text's vector vanishes


def test_the_query_path_makes_the_builds_vectors_bit_for_bit(tmp_path: Path) -> None:
    e = _model()
    texts = [f"The Acme platform keeps {t} for team {i}" for i, t in enumerate(TOPICS * 8)]
    items = [(t,) for t in texts] + [("a turn", "with its", "neighbours")]
    vectors, fit = e.encode_fitting(items)
    assert fit is not None and fit.texts == len(set(texts)) + 3
    assert np.array_equal(vectors[: len(texts)], e.encode_weighted(items[: len(texts)], fit))
    w = fit.weights()

    def weigh(ids: list[int]) -> np.ndarray:
        return w[np.array(ids, dtype=np.int64)]

    table = tmp_path / "words"
    table.write_text(e.wordpiece_table() or "")
    for words in (table, None):  # the index's WordPiece table, and `tokenizers`
        for i in (0, 17, 42):
            assert np.array_equal(e.encode_query(texts[i], words, weigh), vectors[i])
    # a window is its parts' tokens together
    together = e.encode_weighted([("a turn with its neighbours",)], fit)[0]
    assert np.allclose(vectors[-1], together, atol=1e-6)


def test_a_small_corpus_keeps_model2vecs_vectors() -> None:
    e = _model()
    items = [(f"claim number {i} about caches",) for i in range(fitted.MIN_TEXTS - 1)]
    vectors, fit = e.encode_fitting(items)
    assert fit is None
    assert np.array_equal(vectors, e.encode([t for (t,) in items]))


def test_a_build_fits_the_weights_and_a_refresh_keeps_them(kb: KB) -> None:
    texts = _claims(kb, 80)
    index = Index.open(kb)
    try:
        assert index.meta["fit_texts"] == "80" and index.meta["fit_chunks"] == "80"
        # the query's vector of a claim's own text is that claim's vector
        hit = index.vector(index.embed_query(texts[7]), 1)[0]
        assert index.chunks([hit.chunk_id])[hit.chunk_id].text == texts[7]
        assert abs(hit.score - 1.0) < 1e-6
    finally:
        index.close()
    df = _token_df(kb)
    common = _model()._table()._tokenizers().token_to_id("platform")  # type: ignore[union-attr]
    assert df[common] == 80  # in every claim
    revision = None

    new = "The Acme platform keeps licences for service number 999"
    claim(kb, new)
    commit(kb)
    index = Index.open(KB(kb.dir))
    try:
        assert index.last_report is not None and index.last_report.mode == "refresh"
        assert index.meta["fit_texts"] == "80"  # the same weights for every vector
        hit = index.vector(index.embed_query(new), 1)[0]
        assert index.chunks([hit.chunk_id])[hit.chunk_id].text == new
        assert abs(hit.score - 1.0) < 1e-6
        revision = index.meta["corpus_revision"]
    finally:
        index.close()
    assert _token_df(kb) == df

    _claims(kb, 80, start=100)  # 161 chunks: the corpus doubled since the fit
    index = Index.open(KB(kb.dir))
    try:
        assert index.last_report is not None and index.last_report.mode == "rebuild"
        assert index.meta["fit_texts"] == "161" and index.meta["fit_chunks"] == "161"
        assert index.meta["corpus_revision"] != revision
    finally:
        index.close()
    assert _token_df(kb)[common] == 161


def test_a_growing_knowledge_base_is_fitted_once_it_has_enough_text(kb: KB) -> None:
    _claims(kb, 5)
    index = Index.open(kb)
    assert index.meta["fit_texts"] == "0"
    index.close()
    _claims(kb, fitted.MIN_TEXTS, start=5)
    index = Index.open(KB(kb.dir))
    try:
        assert index.last_report is not None and index.last_report.mode == "rebuild"
        assert index.meta["fit_texts"] == str(fitted.MIN_TEXTS + 5)
    finally:
        index.close()


def test_a_damaged_fit_is_rebuilt(kb: KB) -> None:
    _claims(kb, 70)
    Index.open(kb).close()
    conn = sqlite3.connect(index_dir(kb) / DB_NAME)
    conn.execute("UPDATE index_meta SET value = 'many' WHERE key = 'fit_texts'")
    conn.commit()
    conn.close()
    index = Index.open(KB(kb.dir))
    try:
        assert index.last_report is not None and index.last_report.mode == "rebuild"
        assert index.meta["fit_texts"] == "70"
    finally:
        index.close()


def test_a_pending_claim_scores_as_it_will_once_approved(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    _claims(kb, 70)
    source = kb.ids(KINDS["source"])[0]
    text = "The Acme platform keeps licences in the vault for every service"
    author = CallContext(kb_path=str(kb.root), agent="agent")
    proposed = ops.invoke(author, "kb.propose_claim", {"text": text, "evidence": [source]})

    def cosine(found: dict[str, object]) -> float:
        hit = next(r for r in found["results"] if r["id"] == proposed["claim_id"])  # type: ignore[attr-defined]
        trace = found["trace"]["vector"]  # type: ignore[index]
        return float(next(v["cosine"] for v in trace if v["chunk_id"] == hit["chunk_id"]))

    request = SearchRequest(
        "licences vault", mode="vector", include_pending=True, trace=True, log=False
    )
    before = cosine(search(kb, request))
    reviewer = CallContext(kb_path=str(kb.root), agent="reviewer")
    ops.invoke(reviewer, "kb.read_proposal", {"id": proposed["proposal_id"]})  # shown: pinned
    ops.invoke(reviewer, "kb.approve", {"proposal_id": proposed["proposal_id"]})
    index = Index.open(KB(kb.dir))
    assert index.last_report is not None and index.last_report.mode == "refresh"
    index.close()
    after = cosine(
        search(KB(kb.dir), SearchRequest("licences vault", mode="vector", trace=True, log=False))
    )
    assert after == before


def test_damaged_counts_give_finite_weights_or_a_rebuild(kb: KB) -> None:
    texts = _claims(kb, 70)
    Index.open(kb).close()
    conn = sqlite3.connect(index_dir(kb) / DB_NAME)
    conn.execute("UPDATE token_df SET df = df * 1000 WHERE token % 2 = 0")
    conn.execute("UPDATE token_df SET df = 'many' WHERE token % 2 = 1")
    conn.commit()
    conn.close()
    index = Index.open(KB(kb.dir))
    try:  # a query reads only its own tokens' counts: odd ones or huge, still a vector
        assert np.isfinite(index.embed_query(texts[3])).all()
    finally:
        index.close()
    claim(kb, "The Acme platform keeps licences for service number 999")
    commit(kb)
    index = Index.open(KB(kb.dir))  # a refresh loads every count: damaged, so it rebuilds
    try:
        assert index.last_report is not None and index.last_report.mode == "rebuild"
        assert index.meta["fit_texts"] == "71"
    finally:
        index.close()


def _unigram_model(where: Path, words: list[str]) -> Path:
    """A model2vec directory whose tokenizer is a unigram one (as SentencePiece models
    have): vouch cannot weigh its tokens, model2vec embeds with it."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers.models import Unigram

    vocab = [("<unk>", 0.0), *((w, -1.0) for w in sorted(set(words)))]
    tokenizer = Tokenizer(Unigram(vocab, unk_id=0))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    where.mkdir(parents=True)
    tokenizer.save(str(where / "tokenizer.json"))
    rng = np.random.default_rng(0)
    save_file(
        {"embeddings": rng.normal(size=(len(vocab), 16)).astype(np.float32)},
        str(where / "model.safetensors"),
    )
    (where / "config.json").write_text(
        '{"model_type": "model2vec", "hidden_dim": 16, "normalize": true}'
    )
    return where


def test_a_model_that_cannot_weigh_tokens_is_never_fitted(kb: KB) -> None:
    texts = _claims(kb, 70)
    _unigram_model(kb.root / "models" / "uni", [w for t in texts for w in t.split()])
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("model: default", "model: models/uni"))
    commit(kb)
    index = Index.open(KB(kb.dir))
    try:
        assert index.meta["fit_texts"] == "-1"
        hit = index.vector(index.embed_query(texts[4]), 1)[0]
        assert index.chunks([hit.chunk_id])[hit.chunk_id].text == texts[4]
    finally:
        index.close()
    _claims(kb, 80, start=100)  # doubled: still a refresh, nothing to fit
    index = Index.open(KB(kb.dir))
    try:
        assert index.last_report is not None and index.last_report.mode == "refresh"
    finally:
        index.close()


def test_index_status_says_whether_the_vectors_are_fitted(kb: KB, run_cli: Any) -> None:
    _claims(kb, 5)
    Index.open(kb).close()
    small = run_cli("index", "status", "--json", cwd=kb.root).json()
    assert small["vector_weights"] == {
        "fitted": False,
        "texts": 0,
        "chunks": 5,
        "why_not": "too few texts",
    }
    _claims(kb, 70, start=5)
    Index.open(KB(kb.dir)).close()
    fitted_now = run_cli("index", "status", "--json", cwd=kb.root).json()["vector_weights"]
    assert fitted_now["fitted"] and fitted_now["texts"] == 75
    human = run_cli("index", "status", cwd=kb.root).out
    assert "weights:   fitted to 75 texts of this knowledge base" in human
