#!/usr/bin/env python3
"""LoCoMo turn retrieval (issues 19, 35): each session registered as one transcript source.

The data (`../shared/data/locomo/locomo10.json`, beside the repository; CC BY-NC 4.0) is
read where it lies and never copied into the project. Knowledge bases are built in the
system's temporary directory: all ten conversations in one, each session tagged with its
conversation (how a team keeps them), and one per conversation (an easier problem,
reported beside it: `--layouts`). Sessions are plain-text transcripts (`# Session N —
<date>` then `Speaker: text` lines, an image's caption appended as ` [shares an image:
…]`), registered through `register_many` as a person would. Each question is searched
within its own conversation (by tag in the one knowledge base); R@k is the mean fraction
of its evidence turns in the top k (the LoCoMo paper's metric), per category too.

    python bench/bench_locomo.py [--convs 1-5] [--modes hybrid,fts,vector]
        [--layouts one,per-conversation] [--record]

Without the data (CI) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import append_results, conditions, load_average, table
from vouch.core.config import Config
from vouch.search.engine import SearchRequest, search
from vouch.store import sources
from vouch.store.initkb import init_kb
from vouch.store.kb import KB

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
KS = (5, 10, 25, 50)
CATEGORIES = {4: "single-hop", 1: "multi-hop", 2: "temporal", 3: "open-domain", 5: "adversarial"}
MODE_LABEL = {"hybrid": "default", "fts": "fts-only", "vector": "vector-only"}
_SPLIT = re.compile(r"[\s;,]+")


def session_text(conv: dict[str, Any], n: int) -> tuple[str, list[str]]:
    """A session as a plain transcript, and the dia_id of each of its turns in order."""
    lines = [f"# Session {n} — {conv.get(f'session_{n}_date_time', '')}".rstrip(" —")]
    dia: list[str] = []
    for turn in conv[f"session_{n}"]:
        text = " ".join(str(turn.get("text") or "").split()) or "…"
        if turn.get("blip_caption"):
            text += f" [shares an image: {' '.join(str(turn['blip_caption']).split())}]"
        lines.append(f"{turn['speaker']}: {text}")
        dia.append(str(turn["dia_id"]))
    return "\n".join(lines) + "\n", dia


def knowledge_base(
    group: list[tuple[int, dict[str, Any]]], out: Path
) -> tuple[KB, dict[tuple[str, int], str]]:
    """One knowledge base holding these conversations (cached by their content), and
    (source id, turn) → "<sample_id> <dia_id>". Alone, a conversation's sessions are
    `session_<n>.txt`; together, each is `<sample_id>/session_<n>.txt` tagged with its
    conversation's sample id, the tag a question's search filters on."""
    together = len(group) > 1
    sessions = []
    for _, sample in group:
        conv = sample["conversation"]
        numbers = sorted(
            int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and conv[k]
        )
        sessions += [(str(sample["sample_id"]), n, *session_text(conv, n)) for n in numbers]
    digest = hashlib.sha256(json.dumps(sessions).encode()).hexdigest()[:16]
    name = group[0][1]["sample_id"] if len(group) == 1 else f"{len(group)}-conversations"
    root = out / f"{name}-{digest}"
    mapping_file = root / "turns.json"
    if not mapping_file.is_file():
        shutil.rmtree(root, ignore_errors=True)
        (root / "kb").mkdir(parents=True)
        init_kb(root / "kb", "bench")
        kb = KB.open(root / "kb")
        items = [
            sources.Intake(
                text.encode(),
                "transcript",
                f"{sid}/session_{n}.txt" if together else f"session_{n}.txt",
                f"session {n}",
                tags=(sid,) if together else (),
            )
            for sid, n, text, _ in sessions
        ]
        results = sources.register_many(kb, items, "bench")
        mapping = {
            f"{r['id']}:{t}": f"{sid} {d}"
            for r, (sid, _, _, dia) in zip(results, sessions, strict=True)
            for t, d in enumerate(dia, 1)
        }
        mapping_file.write_text(json.dumps(mapping))
    kb = KB.open(root / "kb")
    raw = json.loads(mapping_file.read_text())
    return kb, {(k.split(":")[0], int(k.split(":")[1])): v for k, v in raw.items()}


def questions(sample: dict[str, Any]) -> list[tuple[str, int, set[str]]]:
    known = {
        str(t["dia_id"])
        for k, v in sample["conversation"].items()
        if re.fullmatch(r"session_\d+", k)
        for t in v or []
    }
    out = []
    for qa in sample["qa"]:
        evidence = {e for item in qa.get("evidence") or [] for e in _SPLIT.split(str(item)) if e}
        evidence &= known
        if evidence:
            out.append((str(qa["question"]), int(qa["category"]), evidence))
    return out


LAYOUTS = {
    "one": "one knowledge base, searched by tag",
    "per-conversation": "a knowledge base per conversation",
}


def run(
    samples: list[tuple[int, dict[str, Any]]],
    modes: list[str],
    out: Path,
    settings: dict[str, float] | None = None,
    layout: str = "one",
    asked: set[int] | None = None,
) -> dict[str, Any]:
    """Per mode: the fraction of evidence found at each k for every question, by
    conversation number and category, and the time per search. `layout` "one" keeps
    every conversation in one knowledge base (how a team keeps them) and searches each
    question with its conversation's tag; "per-conversation" builds one each (an easier
    problem: the term statistics see one conversation). `settings` are `search.<name>`
    values laid over each knowledge base's config.yaml (in memory). `asked`: the
    conversation numbers whose questions are searched (all when None); the one knowledge
    base holds every conversation of `samples` whichever are asked, per conversation only
    those asked are built."""
    asked = {n for n, _ in samples} if asked is None else asked
    found: dict[str, list[tuple[int, int, dict[int, float]]]] = defaultdict(list)
    times: dict[str, list[float]] = defaultdict(list)
    groups = [samples] if layout == "one" else [[p] for p in samples if p[0] in asked]
    for group in groups:
        kb, turns = knowledge_base(group, out)
        if settings:
            data = {**kb.config.data, "search": {**kb.config.get("search", {}), **settings}}
            kb.__dict__["config"] = Config(data)  # KB.config is a cached property
        warm: dict[str, Any] = {}
        for number, sample in group:
            if number not in asked:
                continue
            sid = str(sample["sample_id"])
            tags = (sid,) if len(group) > 1 else ()
            for question, category, evidence in questions(sample):
                wanted = {f"{sid} {e}" for e in evidence}
                for mode in modes:
                    request = SearchRequest(question, mode=mode, top=max(KS), tags=tags, log=False)
                    t0 = time.perf_counter()
                    response = search(kb, request, warm=warm)
                    times[mode].append(time.perf_counter() - t0)
                    ranked = [
                        turns.get((h["id"], h["source"].get("turn") or 0))
                        for h in response["results"]
                    ]
                    found[mode].append(
                        (
                            number,
                            category,
                            {k: len(wanted & set(ranked[:k])) / len(wanted) for k in KS},
                        )
                    )
    return {"found": found, "times": times, "layout": layout}


def recall(rows: list[tuple[int, int, dict[int, float]]], k: int) -> float:
    return 100 * sum(r[2][k] for r in rows) / len(rows) if rows else float("nan")


def report(results: list[dict[str, Any]], groups: dict[str, set[int]]) -> str:
    """One table per group of conversations: every layout and mode a row."""
    body = []
    for label, convs in groups.items():
        rows = []
        for result in results:
            for mode, found in result["found"].items():
                mine = [r for r in found if r[0] in convs]
                if not mine:
                    continue
                cats = " / ".join(
                    f"{recall([r for r in mine if r[1] == c], 10):.1f}" for c in CATEGORIES
                )
                rows.append(
                    [
                        LAYOUTS[result["layout"]],
                        MODE_LABEL[mode],
                        len(mine),
                        " / ".join(f"{recall(mine, k):.1f}" for k in KS),
                        cats,
                    ]
                )
        if rows:
            body.append(f"**{label}**\n")
            header = [
                "layout",
                "mode",
                "questions",
                "R@5 / 10 / 25 / 50",
                "R@10 by category (" + " / ".join(CATEGORIES.values()) + ")",
            ]
            body.append(table(header, rows) + "\n")
    for result in results:
        ms = ", ".join(
            f"{MODE_LABEL[m]} {1000 * sorted(t)[len(t) // 2]:.1f}"
            for m, t in result["times"].items()
        )
        body.append(f"Search p50 ms (warm, in process), {LAYOUTS[result['layout']]}: {ms}.")
    return "\n".join(body)


def parse_convs(raw: str) -> set[int]:
    out: set[int] = set()
    for part in raw.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--convs", default="1-10", help="conversation numbers, e.g. 1-5")
    parser.add_argument("--modes", default="hybrid,fts,vector")
    parser.add_argument(
        "--layouts", default="one,per-conversation", help="one, per-conversation or both"
    )
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "vouch-locomo")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a search.NAME setting for this run (tuning), e.g. turn_context=0.5",
    )
    args = parser.parse_args()
    data = args.data / "locomo10.json"
    if not data.is_file():
        print(f"LoCoMo data not found at {data}: skipped (it is never part of the project)")
        return 0
    wanted = parse_convs(args.convs)
    # the one knowledge base always holds all ten (`--convs 1-5` tunes on their questions
    # against the corpus a team would have, not against a corpus of five)
    samples = list(enumerate(json.loads(data.read_text()), 1))
    load_before = load_average()
    settings = {k: float(v) for k, v in (item.split("=", 1) for item in args.set)}
    results = [
        run(samples, args.modes.split(","), args.out, settings, layout, wanted)
        for layout in args.layouts.split(",")
    ]
    groups = {
        "conversations 1–5 (tuning half)": {1, 2, 3, 4, 5} & wanted,
        "conversations 6–10 (held out)": {6, 7, 8, 9, 10} & wanted,
        "all 10 conversations": set(range(1, 11)) if wanted >= set(range(1, 11)) else set(),
    }
    text = report(results, {k: v for k, v in groups.items() if v})
    print(text)
    if args.record:
        command = "python bench/bench_locomo.py " + " ".join(sys.argv[1:])
        append_results(
            "LoCoMo turn retrieval (issue 19)",
            f"{conditions(load_before)}\n\nCommand: `{command.strip()}`\n\n{text}",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
