#!/usr/bin/env python3
"""Choose the default hybrid ranking on the tuning half; report every set, half and size.

Evaluation sets (bench/evalsets.py):
- `golden`: examples/golden (341 documents; no split, reported only);
- `eval`: examples/eval/corpus.jsonl.gz (Debian descriptions + GCIDE entries), built as a
  knowledge base at 1k, 5k documents and full size; queries split by document into a
  tuning half and a held-out half;
- `kb`: examples/eval/kb.jsonl, sources plus approved claims citing them, questions whose
  answer is a claim (split likewise).

Each query's lexical and vector candidates are collected once at depth 200 per channel
(cached under bench/out/), then fusion is replayed in pure Python with the engine's own
`fusion.rrf` / `ranked.convex`; a page is the first 10 chunks, scored on distinct
document ids as `vouch eval` does. `--grid` scores convex-fusion settings on the tuning
halves only (every size of `eval`, and `kb`), as the engine ships them (the similarity
floor and the prior by kind and status applied), and picks the one with the largest worst
margin over the bar (nDCG@10 ≥ fts-only, +0.03 on paraphrase groups), leaving out groups
that no setting lifts to the bar (reported); `--grid words` searches only `coverage_words`
(issue 35), every other knob as shipped. The sets hold no transcript: the shares for
transcript turns are chosen on LoCoMo (bench/bench_locomo.py --convs 1-5 --set ...).
The table then shows every set, half and size: fts-only, vec-only, the previous default
(coverage-gated RRF), the default before issue 35 (`coverage_words` 0) and the engine's
current default (`ranking.DEFAULTS`), with the noise of default − fts-only: its spread
across the two halves of the same set, size and group.

    python bench/tune_search.py [--grid [shares|words]] [--sets golden,eval,kb]
        [--sizes 1000,5000,full]
        [--set NAME=QUERIES.jsonl:DOCS_DIR ...] [--report bench/out/tune-report.md]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import evalsets as es

from vouch.search import eval as ev
from vouch.search.fusion import rrf
from vouch.search.ranked import convex
from vouch.search.ranking import ordered
from vouch.search.tuning import DEFAULTS, Tuning

TOP = 10
Ranker = Callable[[es.Collected], list[str]]


# -- the rankings compared ---------------------------------------------------------------------


def _objects(c: es.Collected, keys: Sequence[Any]) -> list[str]:
    """The object ids of the first TOP chunks, distinct: what `vouch eval` scores (a
    page of TOP results can hold two chunks of one document)."""
    return ev.distinct(c.objects[int(k)] for k in keys[:TOP])


def fts_only(c: es.Collected) -> list[str]:
    return _objects(c, [k for k, _ in c.lexical])


def vec_only(c: es.Collected) -> list[str]:
    return _objects(c, [k for k, _ in c.vector])


def previous_default(c: es.Collected) -> list[str]:
    """The default before issue 14: RRF k=60, vector weight 3.0 when the best lexical
    hits cover under half the query's words, else 0.05."""
    vec_w = 3.0 if c.coverage < 0.5 else 0.05
    fused = rrf(
        {"fts": [k for k, _ in c.lexical], "vector": [k for k, _ in c.vector]},
        k=60,
        weights={"fts": 1.0, "vector": vec_w},
    )
    return _objects(c, [f.key for f in fused[:TOP]])


def rrf_equal(c: es.Collected) -> list[str]:
    fused = rrf({"fts": [k for k, _ in c.lexical], "vector": [k for k, _ in c.vector]}, k=60)
    return _objects(c, [f.key for f in fused[:TOP]])


def engine_default(tuning: Tuning, shipped: bool = True) -> Ranker:
    """What the engine ranks with `tuning`: its own `fusion_weights` and `fuse`, then (as
    shipped) the similarity floor for vector-only hits and the prior by kind and status
    (the evaluation's objects are sources, and claims approved as `working`)."""
    from vouch.search import prior
    from vouch.search.ranking import fuse, fusion_weights

    def rank(c: es.Collected) -> list[str]:
        weights = fusion_weights(tuning, c.coverage, held=c.held)
        ranked = fuse({"fts": ordered(c.lexical), "vector": c.vector}, weights)
        if shipped:
            ranked = ranked.without(list(_weak(c)))
            ranked = prior.apply(ranked, _labels(c, ranked.keys.tolist()), prior.DEFAULT_BOOSTS)
        return _objects(c, ranked.keys[:TOP].tolist())

    return rank


def _weak(c: es.Collected) -> set[int]:
    """The candidates the similarity floor drops: found only by the vector channel, below
    the floor (`ranking.floored`, for a query that means something)."""
    from vouch.search.ranking import SIMILARITY_FLOOR

    matched = {cid for cid, _ in c.lexical}
    return {cid for cid, sim in c.vector if sim < SIMILARITY_FLOOR and cid not in matched}


def _labels(c: es.Collected, keys: list[int]) -> tuple[list[int], list[tuple[str, str]]]:
    """The candidates' (kind, status), as `prior.apply` takes them."""
    pairs: list[tuple[str, str]] = [("source", ""), ("claim", "working")]
    found = [_kind_status(c, key) for key in keys]
    return [-1 if pair is None else pairs.index(pair) for pair in found], pairs


def _kind_status(c: es.Collected, key: int) -> tuple[str, str] | None:
    """(kind, status) of a candidate chunk: a sha256 id is a source, else an approved
    claim (the sets hold nothing else)."""
    object_id = c.objects.get(key)
    if object_id is None:
        return None
    is_source = len(object_id) == 64 and all(ch in "0123456789abcdef" for ch in object_id)
    return ("source", "") if is_source else ("claim", "working")


class Fast:
    """Convex fusion replayed quickly: each query's normalised scores computed once per
    normalisation, then any weights combined (same arithmetic as `ranked.convex`)."""

    def __init__(self, rows: Sequence[es.Collected]) -> None:
        self.rows = rows
        self.cache: dict[str, list[tuple[list[Any], dict[Any, float], dict[Any, float]]]] = {}
        self.arrays: dict[str, list[Any]] = {}

    def prepared(self, norm: str) -> list[tuple[list[Any], dict[Any, float], dict[Any, float]]]:
        """`norm` is "<normalisation>" (BM25 scores as they are) or "<normalisation>+ordered"
        (made non-increasing in the lexical channel's order, as the engine does)."""
        if norm not in self.cache:
            out = []
            how, _, lexical_order = norm.partition("+")
            for c in self.rows:
                scored = ordered(c.lexical) if lexical_order else c.lexical
                fused = convex({"fts": scored, "vector": c.vector}, norm=how).fused()
                keys: list[Any] = [f.key for f in fused]
                lex = {f.key: f.breakdown["fts"] or 0.0 for f in fused}
                vec = {f.key: f.breakdown["vector"] or 0.0 for f in fused}
                out.append((keys, lex, vec))
            self.cache[norm] = out
        return self.cache[norm]

    def ranked(self, norm: str, weight_of: Callable[[es.Collected], float]) -> list[list[str]]:
        """Each query's objects as fused with the share `weight_of` gives it, then (as
        the engine ships) without the vector-only hits below the similarity floor and
        rescored by the prior by kind and status: both are independent of the share, so
        they are computed once."""
        import numpy as np

        from vouch.search import prior

        if norm + "/np" not in self.arrays:
            arrays = []
            for c, (keys, lex, vec) in zip(self.rows, self.prepared(norm), strict=True):
                weak = _weak(c)
                kept = [k for k in keys if k not in weak]
                arrays.append(
                    (
                        kept,
                        np.array([lex[k] for k in kept]),
                        np.array([vec[k] for k in kept]),
                        1.0 + prior.rates(_labels(c, kept), prior.DEFAULT_BOOSTS),
                    )
                )
            self.arrays[norm + "/np"] = arrays
        out = []
        for c, (keys, lex, vec, scale) in zip(self.rows, self.arrays[norm + "/np"], strict=True):
            a = weight_of(c)
            # stable sort on the negated score: equal scores keep convex's tie order
            order = np.argsort(-(a * lex + (1 - a) * vec) * scale, kind="stable")[:TOP]
            out.append(_objects(c, [keys[i] for i in order]))
        return out


# -- scoring -------------------------------------------------------------------------------------


def metrics(
    rows: Sequence[es.Collected], ranked: Sequence[list[str]]
) -> dict[str, dict[str, float]]:
    """nDCG@10 and R@10 per group (and `all`), with the query count."""
    sums: dict[str, list[float]] = {}
    for c, r in zip(rows, ranked, strict=True):
        values = (ev.ndcg(r, c.query.relevant), ev.recall(r, c.query.relevant))
        for group in ("all", c.query.group):
            bucket = sums.setdefault(group, [0.0, 0.0, 0])
            bucket[0] += values[0]
            bucket[1] += values[1]
            bucket[2] += 1
    return {g: {"ndcg": s[0] / s[2], "recall": s[1] / s[2], "n": s[2]} for g, s in sums.items()}


def is_paraphrase(group: str) -> bool:
    return "paraphrase" in group


def margins(m: dict[str, dict[str, float]], fts: dict[str, dict[str, float]]) -> dict[str, float]:
    """Per group: nDCG@10 above the bar (fts-only, +0.03 on paraphrase groups)."""
    return {
        g: m[g]["ndcg"] - fts[g]["ndcg"] - (0.03 if is_paraphrase(g) else 0.0)
        for g in m
        if g != "all"
    }


# -- the sets ------------------------------------------------------------------------------------


def load_sets(
    names: Sequence[str], sizes: Sequence[int | None], extra: Sequence[str] = ()
) -> dict[str, list[es.Collected]]:
    """`{"<set>@<size>": collected}`. `extra` adds any other set as
    `NAME=QUERIES.jsonl:DOCS_DIR` (a golden-format file over a directory of documents;
    queries with a `half` field are split, others reported as `all`)."""
    out: dict[str, list[es.Collected]] = {}
    root = es.ROOT
    for spec in extra:
        name, _, paths = spec.partition("=")
        queries, _, where = paths.partition(":")
        if not name or not queries or not where:
            raise SystemExit(f"--set {spec!r}: expected NAME=QUERIES.jsonl:DOCS_DIR")
        kb = es.corpus_kb(name, Path(where))
        qs = es.load_queries(Path(queries))
        out[f"{name}@{len(list(Path(where).iterdir()))}"] = es.collect(name, kb, qs)
    if "golden" in names:
        kb = es.corpus_kb("golden", root / "examples/golden/docs")
        qs = es.load_queries(root / "examples/golden/golden.jsonl")
        out["golden@341"] = es.collect("golden", kb, qs)
    if "eval" in names or "kb" in names:
        docs = es.eval_docs()
    if "eval" in names:
        for size in sizes:
            sub = es.subset(docs, size)
            label = f"eval@{len(sub)}"
            ids = {
                hashlib.sha256(es.document_bytes(d["title"], d["text"])).hexdigest() for d in sub
            }
            docs_dir = es.OUT / f"eval-{len(sub)}-docs"
            if not docs_dir.is_dir() or len(list(docs_dir.iterdir())) != len(sub):
                es.materialize(sub, docs_dir)
            kb = es.corpus_kb(f"eval-{len(sub)}", docs_dir)
            qs = es.load_queries(root / "examples/eval/queries.jsonl", ids)
            out[label] = es.collect(f"eval-{len(sub)}", kb, qs)
    if "kb" in names:
        rows = [json.loads(x) for x in (root / "examples/eval/kb.jsonl").read_text().splitlines()]
        kb, qs = es.kb_set_kb(rows, docs)
        out[f"kb@{sum(1 for r in rows)}src"] = es.collect("kbset", kb, qs)
    return out


def halves(rows: Sequence[es.Collected]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, c in enumerate(rows):
        out.setdefault(c.query.half, []).append(i)
    return out


# -- main ----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="golden,eval,kb")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=QUERIES.jsonl:DOCS_DIR",
        help="another evaluation set (golden format; a `half` field makes it tunable)",
    )
    parser.add_argument("--sizes", default="1000,5000,full")
    parser.add_argument("--report", type=Path, default=es.OUT / "tune-report.md")
    parser.add_argument(
        "--grid",
        nargs="?",
        const="shares",
        choices=("shares", "words"),
        help="search the fusion grid: the shares and cuts, or only coverage_words",
    )
    parser.add_argument("--no-report", action="store_true", help="only the grid search")
    args = parser.parse_args()
    sizes = [None if s == "full" else int(s) for s in args.sizes.split(",")]
    t0 = time.time()
    sets = load_sets([n for n in args.sets.split(",") if n], sizes, args.set)
    print(
        f"collected in {time.time() - t0:.0f} s: "
        + ", ".join(f"{k} ({len(v)} queries)" for k, v in sets.items()),
        file=sys.stderr,
    )
    tune_keys = [k for k, rows in sets.items() if any(c.query.half == "tune" for c in rows)]

    chosen: dict[str, Any] | None = None
    if args.grid and tune_keys:
        chosen = grid_search(sets, tune_keys, args.grid)
        print(f"chosen on the tuning halves: {chosen}")

    rankers: dict[str, Ranker] = {
        "fts": fts_only,
        "vec": vec_only,
        "rrf-prev": previous_default,
        "fusion-only": engine_default(DEFAULTS, shipped=False),
        "before-35": engine_default(DEFAULTS._replace(coverage_words=0)),
        "default": engine_default(DEFAULTS),
    }
    if args.no_report:
        return 0
    report = evaluate_all(sets, rankers)
    text = render(report, rankers)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(text)
    print(text)
    return 0


WORDS = (0, 2, 3, 4, 5, 6, 7, 8)  # coverage_words tried by `--grid words`


def grid_search(
    sets: dict[str, list[es.Collected]], tune_keys: Sequence[str], knobs: str = "shares"
) -> dict[str, Any]:
    """Convex fusion settings scored on the tuning halves only (every size of `eval`, and
    `kb`, and any `--set` with a tuning half), floor and prior applied as shipped
    (`Fast.ranked`). A setting gives BM25 the share `a_full` when a top lexical hit holds
    every content word of the query or at least `words` of them, `a_mid` when the best
    holds at least `cut`, else `a_low`. `knobs` "shares" searches the shares and cuts
    (`words` as shipped), "words" only `words` (the rest as shipped).

    A group that no setting lifts to its bar is "out of reach": reported, and left out
    of the choice. The setting with the largest worst margin over the other groups wins
    (then the largest mean margin over all groups): robustness where the bar can be met.
    """
    tune_rows = {k: [c for c in sets[k] if c.query.half == "tune"] for k in tune_keys}
    fasts = {k: Fast(rows) for k, rows in tune_rows.items()}
    fts = {k: metrics(rows, [fts_only(c) for c in rows]) for k, rows in tune_rows.items()}
    shares = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    settings: list[dict[str, Any]] = [
        {
            "norm": norm,
            "cut": cut,
            "a_full": a_full,
            "a_mid": a_mid,
            "a_low": a_low,
            "words": DEFAULTS.coverage_words,
        }
        for norm in ("minmax", "zscore")
        for cut in (0.3, 0.5, 0.7)
        for a_mid in shares[3:]
        for a_full in sorted({a_mid, 0.8, 1.0})
        for a_low in shares[:6]
        if a_low <= a_mid <= a_full
    ]
    if knobs == "words":
        from vouch.search.ranking import FUSION_NORM

        shipped = {
            "norm": FUSION_NORM,
            "cut": DEFAULTS.coverage_cut,
            "a_full": DEFAULTS.fts_share_full,
            "a_mid": DEFAULTS.fts_share,
            "a_low": DEFAULTS.fts_share_uncovered,
        }
        settings = [{**shipped, "words": words} for words in WORDS]
    scored = []
    for s in settings:

        def weight(c: es.Collected, s: dict[str, Any] = s) -> float:
            if c.coverage >= 1.0 or (s["words"] > 0 and c.held >= s["words"]):
                return float(s["a_full"])
            return float(s["a_mid"] if c.coverage >= s["cut"] else s["a_low"])

        found: dict[str, float] = {}
        for k in tune_keys:
            got = metrics(tune_rows[k], fasts[k].ranked(s["norm"] + "+ordered", weight))
            found.update({f"{k}/{g}": v for g, v in margins(got, fts[k]).items()})
        scored.append((s, found))
    groups = list(scored[0][1])
    out_of_reach = [g for g in groups if all(found[g] < 0 for _, found in scored)]
    reachable = [g for g in groups if g not in out_of_reach]

    def key(item: tuple[dict[str, Any], dict[str, float]]) -> tuple[float, float]:
        _, found = item
        return (-min(found[g] for g in reachable), -sum(found.values()) / len(found))

    scored.sort(key=key)
    print(f"{len(settings)} settings; out of reach on the tuning halves: {out_of_reach}")
    for s, found in scored[: max(10, len(WORDS))]:
        worst = min(found[g] for g in reachable)
        cells = " ".join(f"{g}={v:+.3f}" for g, v in found.items())
        print(f"  {s} worst={worst:+.3f} {cells}")
    best, found = scored[0]
    return {**best, "out_of_reach": out_of_reach, "margins": found}


def evaluate_all(
    sets: dict[str, list[es.Collected]], rankers: dict[str, Ranker]
) -> dict[str, dict[str, dict[str, dict[str, dict[str, float]]]]]:
    """set -> half -> mode -> group -> metrics."""
    out: dict[str, Any] = {}
    for key, rows in sets.items():
        ranked = {mode: [r(c) for c in rows] for mode, r in rankers.items()}
        out[key] = {}
        for half, idx in sorted(halves(rows).items(), key=lambda h: h[0] != "heldout"):
            out[key][half] = {
                mode: metrics([rows[i] for i in idx], [ranked[mode][i] for i in idx])
                for mode in rankers
            }
    return out


def render(report: dict[str, Any], rankers: dict[str, Ranker]) -> str:
    """Every set, half and group; `noise` is |Δ tune − Δ held-out| of Δ = default − fts
    nDCG@10 for the same set and group (none for a set without halves), and "beyond
    noise" marks a default below fts-only by more than it."""
    modes = list(rankers)
    head = "| set | half | group (n) | " + " | ".join(f"{m} nDCG / R@10" for m in modes)
    head += " | default − fts | noise | beyond noise | bar |"
    lines = [head, "|" + "---|" * (len(modes) + 7)]
    for key, by_half in report.items():
        delta = {
            (half, g): by_mode["default"][g]["ndcg"] - by_mode["fts"][g]["ndcg"]
            for half, by_mode in by_half.items()
            for g in by_mode["fts"]
        }
        for half, by_mode in by_half.items():
            groups = sorted(by_mode["fts"], key=lambda g: (g != "all", g))
            for g in groups:
                fts = by_mode["fts"][g]["ndcg"]
                new = by_mode["default"][g]["ndcg"]
                need = fts + (0.03 if is_paraphrase(g) else 0.0)
                bar = "—" if g == "all" else ("met" if new >= need - 1e-9 else "**not met**")
                cells = " | ".join(
                    f"{by_mode[m][g]['ndcg']:.3f} / {by_mode[m][g]['recall']:.3f}" for m in modes
                )
                n = int(by_mode["fts"][g]["n"])
                pair = [delta.get((h, g)) for h in ("tune", "heldout")]
                if None in pair:
                    noise, beyond = "", "—"
                else:
                    spread = abs(pair[0] - pair[1])  # type: ignore[operator]
                    noise = f"{spread:.3f}"
                    beyond = "**yes**" if new - fts < -spread - 1e-9 else "no"
                lines.append(
                    f"| {key} | {half} | {g} ({n}) | {cells} | {new - fts:+.3f} | {noise} "
                    f"| {beyond} | {bar} |"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
