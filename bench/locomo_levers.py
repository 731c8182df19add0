#!/usr/bin/env python3
"""LoCoMo levers not shipped (issue 35 item 3), measured by patching the search in process.

A prototype, not the engine: each lever replaces one function for the length of the run
(nothing here changes what vouch ships). The one-KB layout always holds all ten
conversations (as `bench_locomo.py` builds it); only the questions of `--convs` are asked,
so tuning on conversations 1-5 never reads an answer of 6-10.

- `--idf filter`: BM25's document frequencies and row count taken within the rows the
  filter passes (the tagged conversation), not the whole table: FTS5's formula otherwise
  (warm path, `Postings.ranked`).
- `--session S`: each turn's score gains S × the best score among the candidates of its
  own session (after `in_context`): turns of the session the query is about rise together.
- `--set NAME=VALUE`: search.* settings, as bench_locomo.py.

    python bench/locomo_levers.py --convs 1-5 [--layout one|per] [--idf filter]
        [--session 0.2] [--set speaker_bonus=0.6] [--modes hybrid,fts] [--dump FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_locomo as bl

import vouch.search.engine as engine
from vouch.core.config import Config
from vouch.index.lexical import postings
from vouch.index.lexical.base import LexicalHit, query_terms
from vouch.search.ranked import Ranked

SESSION: dict[int, int] = {}  # chunk id -> its source (one session each)


def filter_idf_ranked(self: Any, query: str, k: int, passing: Any) -> list[LexicalHit] | None:
    """`Postings.ranked` with N and n(p) counted among the rows `passing`."""
    phrases = self._tokenizer.tokens(query_terms(query))
    if any(not tokens for tokens in phrases):
        return None
    rows = int(passing.sum()) if len(passing) else self.rows
    score = np.zeros(self.size, dtype=np.float64)
    matched = np.zeros(self.size, dtype=np.int32)
    for tokens in phrases:
        docs, freq = self._phrase(tuple(tokens))
        inside = docs[docs < len(passing)]
        hits = int(passing[inside].sum())
        idf = math.log((rows - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        score[docs] += idf * ((freq * (postings.K1 + 1.0)) / (freq + self.norm[docs]))
        matched[docs] += 1
    found = np.flatnonzero(matched[: len(passing)] > 0)
    found = found[passing[found]]
    every = matched[found] == len(phrases)
    best = postings._best(found[every], score, k)
    if len(best) < k:
        best = np.concatenate([best, postings._best(found[~every], score, k - len(best))])
    return [LexicalHit(c, s, "") for c, s in zip(best.tolist(), score[best].tolist(), strict=True)]


def with_session(share: float) -> Any:
    original = engine.in_context

    def in_context(ranked: Ranked, links: Any, query: str, context: float, bonus: float) -> Ranked:
        out = original(ranked, links, query, context, bonus)
        if not len(out.keys):
            return out
        sessions = [SESSION.get(int(k), -1) for k in out.keys]
        best: dict[int, float] = {}
        for s, score in zip(sessions, out.score.tolist(), strict=True):
            best.setdefault(s, score)  # sorted: the first is the best
        added = share * np.array([best[s] for s in sessions])
        return Ranked(out.keys, out.score + added, out.parts, out.ranks).sorted()

    return in_context


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=bl.DATA)
    ap.add_argument("--out", type=Path, default=Path("/tmp/vouch-locomo"))
    ap.add_argument("--layout", default="one", choices=("one", "per"))
    ap.add_argument("--convs", default="1-5")
    ap.add_argument("--modes", default="hybrid,fts")
    ap.add_argument("--idf", default="table", choices=("table", "filter"))
    ap.add_argument("--session", type=float, default=0.0)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--dump", type=Path, help="per-question recall as JSON")
    args = ap.parse_args()
    if args.idf == "filter":
        postings.Postings.ranked = filter_idf_ranked  # type: ignore[method-assign]
    if args.session:
        engine.in_context = with_session(args.session)  # type: ignore[attr-defined]
    data = json.loads((args.data / "locomo10.json").read_text())
    every = list(enumerate(data, 1))
    wanted = bl.parse_convs(args.convs)
    settings = {k: float(v) for k, v in (s.split("=", 1) for s in args.set)}
    groups = [every] if args.layout == "one" else [[p] for p in every if p[0] in wanted]
    modes = args.modes.split(",")
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for group in groups:
        kb, turns = bl.knowledge_base(group, args.out)
        if settings:
            merged = {**kb.config.data, "search": {**kb.config.get("search", {}), **settings}}
            kb.__dict__["config"] = Config(merged)
        db = sqlite3.connect(kb.root / ".vouch" / "index" / "search.db")
        docs: dict[str, int] = {}
        SESSION.clear()
        SESSION.update(
            {
                i: docs.setdefault(d, len(docs))
                for i, d in db.execute("SELECT id, doc_key FROM chunks")
            }
        )
        warm: dict[str, Any] = {}
        for _ in range(3):  # every scored search takes the warm path
            engine.search(
                kb, engine.SearchRequest("hello", mode="fts", top=50, log=False), warm=warm
            )
        for number, sample in group:
            if number not in wanted:
                continue
            sid = str(sample["sample_id"])
            tags = (sid,) if len(group) > 1 else ()
            for question, category, evidence in bl.questions(sample):
                want = {f"{sid} {e}" for e in evidence}
                for mode in modes:
                    request = engine.SearchRequest(
                        question, mode=mode, top=50, tags=tags, log=False
                    )
                    response = engine.search(kb, request, warm=warm)
                    got = [
                        turns.get((h["id"], h["source"].get("turn") or 0))
                        for h in response["results"]
                    ]
                    recall = {k: len(want & set(got[:k])) / len(want) for k in bl.KS}
                    rows[mode].append({"conv": number, "cat": category, "q": question, "r": recall})
    for mode in modes:
        mine = rows[mode]
        ks = " / ".join(f"{100 * sum(x['r'][k] for x in mine) / len(mine):.1f}" for k in bl.KS)
        cats = " / ".join(
            f"{100 * np.mean([x['r'][10] for x in mine if x['cat'] == c] or [math.nan]):.1f}"
            for c in bl.CATEGORIES
        )
        print(
            f"{args.layout} idf={args.idf} session={args.session} {settings} {mode}: "
            f"n={len(mine)} R@5/10/25/50 {ks} | R@10 by category {cats}"
        )
    if args.dump:
        args.dump.write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
