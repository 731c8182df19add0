"""The bundled model2vec model: offline, small, and the same vectors on both paths."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from index_support import claim, commit, ids_of

from vouch.embed import joined
from vouch.embed import model as embed
from vouch.errors import EmbeddingDisabled, UsageError
from vouch.index import Index, index_status
from vouch.store.kb import KB


def test_bundled_model_is_small_and_documented() -> None:
    directory = embed.default_model_dir()
    size = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
    assert size <= 10 * 1024 * 1024
    assert (directory / "PROVENANCE.md").is_file() and (directory / "LICENSE").is_file()


def test_query_path_reproduces_model2vec_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ref = embed.describe(embed.default_model_dir(), "default")
    e = embed.Embedder(ref)
    texts = [
        "configure authentication",
        "Ünïcödé café, naïve: 日本語!",
        "",
        "zzqqxx",
        "roll back the billing release " * 300,
    ]
    bulk = e.encode(texts)
    assert bulk.shape == (len(texts), ref.dims) and bulk.dtype == np.float32
    for text, row in zip(texts, bulk, strict=True):
        assert np.array_equal(e.encode_query(text), row)
    norms = np.linalg.norm(bulk[[0, 1, 4]], axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


def test_similar_meaning_scores_higher() -> None:
    e = embed.Embedder(embed.describe(embed.default_model_dir(), "default"))
    q = e.encode_query("how do I undo a deployment")
    good, bad = e.encode(
        ["roll back a release to the previous version", "the cafeteria serves lunch at noon"]
    )
    assert float(q @ good) > float(q @ bad)


def test_bad_model_path_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(UsageError):
        embed.describe(tmp_path / "nope")


def test_embeddings_disabled_is_lexical_only(kb: KB) -> None:
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("enabled: true", "enabled: false"))
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)
    index = Index.open(KB(kb.dir))
    try:
        assert len(ids_of(index, index.lexical("rollbacks"))) == 1
        assert index.counts()["vectors"] == 0
        with pytest.raises(EmbeddingDisabled) as err:
            index.embed_query("undo a deploy")
        assert err.value.exit_code == 1
        with pytest.raises(EmbeddingDisabled):
            index.vector(np.zeros(256, dtype=np.float32))
    finally:
        index.close()
    assert index_status(KB(kb.dir))["model"]["configured"] is None


def test_embeddings_disabled_default_search_is_lexical(kb: KB, run_cli: Any) -> None:
    # review: with embedding.enabled false, a plain `vouch search` failed with E107
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("enabled: true", "enabled: false"))
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)
    result = run_cli("search", "rollbacks", "--kb", str(kb.dir), terminal=False)
    assert result.code == 0, result.err
    data = result.json()
    assert data["mode"] == "fts" and data["returned"] == 1
    assert data["results"][0]["score_breakdown"]["vector"] is None
    vector = run_cli("search", "rollbacks", "--vec-only", "--kb", str(kb.dir), terminal=False)
    assert vector.code == 1 and vector.json()["error"]["code"] == "E107"


def test_changing_the_model_setting_rebuilds(kb: KB) -> None:
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)
    Index.open(kb).close()
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("enabled: true", "enabled: false"))
    index = Index.open(KB(kb.dir))
    assert index.last_report is not None and index.last_report.mode == "rebuild"
    assert index.meta["embedding_model"] == "none"
    index.close()


def test_any_model2vec_directory_can_be_configured(kb: KB) -> None:
    import shutil

    shutil.copytree(embed.default_model_dir(), kb.root / "models" / "mine")
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("model: default", "model: models/mine"))
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)
    index = Index.open(KB(kb.dir))
    try:
        assert index.meta["embedding_model"].startswith("mine@")
        hits = index.vector(index.embed_query("undo a deploy with ship"), 1)
        assert len(hits) == 1
    finally:
        index.close()
    cfg.write_text(cfg.read_text().replace("model: models/mine", "model: models/missing"))
    with pytest.raises(UsageError):
        Index.open(KB(kb.dir))


def test_a_retrained_model_of_the_same_shape_reembeds(kb: KB) -> None:
    """A model retrained in place keeps its config and every file size (the bundled one
    did when it was fitted with tokenlearn); the index must still notice and re-embed,
    or it would compare new query vectors with the old model's chunk vectors."""
    import shutil

    mine = kb.root / "models" / "mine"
    shutil.copytree(embed.default_model_dir(), mine)
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("model: default", "model: models/mine"))
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)
    index = Index.open(KB(kb.dir))
    before = index.meta["embedding_model"]
    index.close()
    weights = mine / "model.safetensors"
    data = bytearray(weights.read_bytes())
    for at in range(len(data) - 4096, len(data)):  # rows at the table's end, same size
        data[at] = (data[at] + 1) % 256
    weights.write_bytes(bytes(data))
    index = Index.open(KB(kb.dir))
    try:
        assert index.meta["embedding_model"] != before
        assert index.last_report is not None and index.last_report.mode == "rebuild"
    finally:
        index.close()


def _windows(turns: list[str]) -> list[tuple[str, ...]]:
    """Each turn with its neighbours, as `index.chunking.transcript_pieces` makes them."""
    return [tuple(turns[max(0, i - 1) : i + 2]) for i in range(len(turns))]


def test_joined_parts_give_model2vecs_vectors_bit_for_bit() -> None:
    e = embed.Embedder(embed.describe(embed.default_model_dir(), "default"))
    root = Path(__file__).resolve().parents[1]
    real = [
        line.strip()
        for name in ("README.md", "CHANGELOG.md", "SKILL.md", "examples/golden/README.md")
        for line in (root / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    tricky = [
        "",
        " ",
        "\t",
        "😀😀",  # unknown tokens only
        "\x00\x7f",
        "\u0301accent at the start",
        "ends with an accent e\u0301",
        "日本語のテキスト",
        "Ünïcödé café, naïve!",
        "don't-stop—punctuation…at the edges.",
        "line\nbreak inside",
        "word " * 600,  # over 512 tokens: model2vec truncates, so left to it
        "x" * 4000,  # over the character cut
    ]
    rng = random.Random(3)
    turns = real + [rng.choice(tricky) for _ in range(300)]
    rng.shuffle(turns)
    items = [*_windows(turns), ("single part",), ("a", "b"), ("", ""), ("word " * 200,) * 3]
    joined = e.encode_joined(items)
    reference = e.encode(["\n".join(parts) for parts in items])
    assert len(items) > 1000 and joined.dtype == np.float32
    assert np.array_equal(joined, reference)
    # the windows really were made from their parts: the table path accepts this model
    fast = e._table()
    assert fast is not None and fast.encode_joined(items[:100]) is not None


def test_a_float_table_is_not_summed_from_parts() -> None:
    e = embed.Embedder(embed.describe(embed.default_model_dir(), "default"))
    fast = e._table()
    assert fast is not None
    tokenizer = fast._tokenizers()
    table = fast.table.whole()
    assert joined.splits_cleanly(tokenizer, table)
    # float rows do not sum exactly in every order: model2vec embeds the joined text
    assert not joined.splits_cleanly(tokenizer, table.astype(np.float32))
