#!/usr/bin/env python3
"""Transcripts at scale (issue 19): rebuild, warm search and registration at 100k turns.

    python bench/bench_turns.py [--turns 100000] [--queries 200] [--rebuild-runs 3]
                                [--add-runs 5] [--out bench/out/turns-100000] [--record]

Builds two knowledge bases in a fresh directory (it refuses an existing one: delete it
yourself, and not right before timing anything):
- `turns/`: ~turns/700 team-chat transcripts of 700 turns each (`# Session N — <date>`
  every 20–40 turns, then `Speaker: text` lines), generated from `vocab.py` with a fixed
  seed and registered as transcripts through `register_many`, as a person would;
- `docs/`: the same-size document corpus, as many markdown documents of short `##`
  sections (one chunk each) from the same vocabulary, so both have about as many chunks.
Then times `vouch index rebuild` as a cold process on both (alternating, after one
untimed build each, whose report gives the stages); warm in-process
`engine.search` over the turns (hybrid / fts / vector, and hybrid with `--speaker` and
`--since`), profiling one query's time with cProfile when hybrid misses 10 ms p50; and
last, cold `vouch source add FILE --type transcript` of new 700-turn transcripts into
an empty knowledge base and into the 100k-turn one.
Targets: warm search ≤ 10 ms p50 at 100k turns; registering a 700-turn transcript
≤ 1 s; rebuild within 10 % of the same-size document corpus.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import re
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import vocab
from common import (
    append_results,
    conditions,
    load_average,
    percentile,
    run_vouch,
    table,
    time_cold_cpu,
    vouch_exe,
)

from vouch.index import index_status
from vouch.search import access
from vouch.search.engine import SearchRequest, search
from vouch.store import sources
from vouch.store.initkb import init_kb
from vouch.store.kb import KB

TURNS_PER_TRANSCRIPT = 700
FIRST_DAY = date(2024, 1, 1)
DAYS_APART = 5  # transcript k starts FIRST_DAY + 5k days: many channels over two years
TARGET_SEARCH_MS, TARGET_ADD_S, TARGET_RATIO = 10.0, 1.0, 1.10
PARAPHRASES = (
    "who rolled back the release after the outage",
    "what did we decide about feature flags",
    "why did nobody get paged",
    "which team owns the billing service",
    "when is the database migration",
    "is the queue backing up again",
    "how do I rotate the credentials",
    "what caused the latency spike last week",
    "who should I ask about the deploy",
    "did the hotfix go out",
)

# -- text ----------------------------------------------------------------------------------
_V = vocab
_SLOTS: dict[str, Callable[[random.Random], str]] = {
    "system": lambda r: f"{r.choice(_V.DOMAINS)}-{r.choice(_V.SYSTEM_SUFFIXES)}",
    "person": lambda r: f"{r.choice(_V.FIRST_NAMES)} {r.choice(_V.LAST_NAMES)}",
    "team": lambda r: f"{r.choice(_V.TEAM_NAMES)} {r.choice(_V.TEAM_KINDS)} team",
    "tool": lambda r: r.choice(_V.TOOLS),
    "repo": lambda r: f"acme/{r.choice(_V.DOMAINS)}-{r.choice(_V.SYSTEM_SUFFIXES)}",
    "incident": lambda r: f"INC-{r.randint(100, 9999)}",
    "api": lambda r: f"/v{r.randint(1, 4)}/{r.choice(_V.DOMAINS)}/{r.choice(_V.RESOURCES)}",
    "concept": lambda r: r.choice(_V.CONCEPTS),
    "file": lambda r: f"{r.choice(_V.FILE_DIRS)}/{r.choice(_V.FILE_NAMES)}{r.choice(_V.FILE_EXTS)}",
    "workflow": lambda r: r.choice(_V.WORKFLOWS),
    "env": lambda r: r.choice(_V.ENVS),
    "region": lambda r: r.choice(_V.REGIONS),
    "n": lambda r: str(r.choice((2, 3, 5, 8, 10, 16, 25, 50, 100, 200, 500, 1000))),
    "dur": lambda r: r.choice(_V.DURATIONS),
    "pct": lambda r: str(r.randint(2, 80)),
    "ver": lambda r: f"{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)}",
    "weekday": lambda r: r.choice(_V.WEEKDAYS),
    "month": lambda r: r.choice(_V.MONTHS),
    "metric": lambda r: r.choice(_V.METRICS),
    "config": lambda r: r.choice(_V.CONFIG_KEYS),
    "resource": lambda r: r.choice(_V.RESOURCES),
    "symptom": lambda r: r.choice(_V.SYMPTOMS),
}
CHAT = (
    "anyone looking at {system}? {metric} is climbing in {env}",
    "on it, checking {tool} now",
    "looks like {symptom} again, same as {incident}",
    "can someone page {person}? {system} is throwing errors",
    "rolled {system} back to {ver}, watching {metric} for {dur}",
    "{person} is out until {weekday}, ask the {team}",
    "I think it's {system2}, not {system}",
    "merged the fix in {repo}, deploying to {env} now",
    "who owns {api} these days?",
    "the alert fired after {dur} of {symptom}",
    "bumping {config} to {n} on {system} in {region}",
    "let's write this up for the {month} review",
    "{metric} is back to normal in {region}",
    "did the {workflow} for {system} ever finish?",
    "opened a ticket in {tool} for the {symptom} on {system}",
    "can we talk about {concept} for {system} on {weekday}?",
    "{system} depends on {system2}, so check that first",
    "still seeing {symptom} in {env}, {pct} percent of requests",
    "the change to {file} broke the {workflow} again",
)
ACKS = ("ok", "thanks!", "+1", "on it", "makes sense", "agreed", "will do", "lgtm", "looking")
_SLOT = re.compile(r"{(\w+)}")


class _Text:
    """Seeded sentences about one topic at a time (a session's system, incident, people),
    so turns near each other talk about the same things, as in a real channel."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.topic: dict[str, str] = {}

    def new_topic(self) -> None:
        self.topic = {slot: make(self.rng) for slot, make in _SLOTS.items()}

    def fill(self, template: str) -> str:
        values = {}
        for slot in set(_SLOT.findall(template)):
            on_topic = slot in self.topic and self.rng.random() < 0.7
            values[slot] = self.topic[slot] if on_topic else _SLOTS[slot.rstrip("2")](self.rng)
        return template.format(**values)

    def chat_line(self) -> str:
        roll = self.rng.random()
        if roll < 0.15:
            return self.rng.choice(ACKS)
        if roll < 0.45:
            return self.fill(self.rng.choice(_V.CLAIM_TEMPLATES)[2])
        return self.fill(self.rng.choice(CHAT))


def transcript(seed: int, turns: int = TURNS_PER_TRANSCRIPT, first_day: date = FIRST_DAY) -> str:
    """A plain-text chat log of `turns` turns among 3–5 people, a dated session header
    every 20–40 turns."""
    text = _Text(seed)
    r = text.rng
    people = r.sample(_V.FIRST_NAMES, r.randint(3, 5))
    lines: list[str] = []
    day, session, left = first_day, 0, 0
    for _ in range(turns):
        if left == 0:
            session += 1
            day += timedelta(days=r.randint(1, 3))
            lines.append(f"# Session {session} — {day.day} {day:%B %Y}")
            text.new_topic()
            left = r.randint(20, 40)
        left -= 1
        lines.append(f"{r.choice(people)}: {text.chat_line()}")
    return "\n".join(lines) + "\n"


def document(seed: int, chunks: int = TURNS_PER_TRANSCRIPT) -> str:
    """Markdown notes of `chunks` chunks: a title, then `##` sections of one or two
    sentences (each section is one chunk, as short as a turn)."""
    text = _Text(seed)
    r = text.rng
    text.new_topic()
    lines = [f"# Notes on {text.topic['system']}", ""]
    for k in range(1, chunks):
        if k % 30 == 1:
            text.new_topic()
        said = text.fill(r.choice(_V.CLAIM_TEMPLATES)[2])
        if r.random() < 0.3:
            said += " " + text.fill(r.choice(_V.FOLLOW_UPS))
        lines += [f"## {r.choice(_V.SECTION_HEADINGS)} {k}", "", said, ""]
    return "\n".join(lines)


# -- knowledge bases -----------------------------------------------------------------------
def new_kb(root: Path) -> KB:
    """An empty knowledge base in its own git repository (never the enclosing clone's)."""
    root.mkdir(parents=True)
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "gc.auto", "0"),
        ("config", "user.name", "vouch bench"),
        ("config", "user.email", "bench@example.invalid"),
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
    init_kb(root, "bench")
    return KB.open(root)


def build(out: Path, files: int) -> dict[str, dict[str, Any]]:
    """The turn corpus and the document corpus, registered in one commit each."""
    made: dict[str, dict[str, Any]] = {}
    for label, items in (
        (
            "turns",
            [
                sources.Intake(
                    transcript(k, first_day=FIRST_DAY + timedelta(days=DAYS_APART * k)).encode(),
                    "transcript",
                    f"chat/ops-{k:03d}.txt",
                    f"#ops chat log {k}",
                )
                for k in range(files)
            ],
        ),
        (
            "docs",
            [
                sources.Intake(
                    document(10_000 + k).encode(),
                    "file",
                    f"docs/notes-{k:03d}.md",
                    f"Notes {k}",
                    "text/markdown",
                )
                for k in range(files)
            ],
        ),
    ):
        started = time.perf_counter()
        sources.register_many(new_kb(out / label), items, "bench")
        made[label] = {
            "root": out / label,
            "files": len(items),
            "mb": round(sum(len(i.content) for i in items) / 1e6, 1),
            "register_s": round(time.perf_counter() - started, 1),
        }
    return made


# -- timings ---------------------------------------------------------------------------------
def rebuilds(corpora: dict[str, dict[str, Any]], runs: int) -> None:
    """Cold `vouch index rebuild` wall and CPU seconds, alternating between the corpora
    so the machine's load drifts over both alike; one untimed build each first."""
    exe = vouch_exe()
    for c in corpora.values():
        cmd = [exe, "index", "rebuild", "--kb", str(c["root"])]
        report = json.loads(run_vouch([*cmd, "--json"], c["root"], check=True).stdout)
        c["stages"] = report.get("result", report).get("stages", {})
        c["wall"], c["cpu"] = [], []
    for _ in range(runs):
        for c in corpora.values():
            wall, cpu = time_cold_cpu(
                [exe, "index", "rebuild", "--kb", str(c["root"])], 1, warmup=0
            )
            c["wall"] += wall
            c["cpu"] += cpu
    for c in corpora.values():
        c["chunks"] = index_status(KB.open(c["root"]))["counts"]["chunks"]


def queries(index: Any, n: int, seed: int = 0) -> list[tuple[str, str]]:
    """(query, speaker): 2–4 words of a random turn with the turn's speaker, plus
    question-like paraphrases (with a random speaker)."""
    rng = random.Random(seed)
    total = int(index.index.counts()["chunks"])
    out: list[tuple[str, str]] = []
    drawn = index.chunks(rng.sample(range(1, total + 1), min(3 * n, total)))  # acks are skipped
    for info in drawn.values():
        said = info.text.split(": ", 1)[-1]
        words = [w.strip(".,;:?!()'\"") for w in said.split() if len(w) > 3]
        if len(words) >= 2:
            out.append(
                (" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))), info.speaker)
            )
    speakers = [s for _, s in out]
    out = out[: n - len(PARAPHRASES)] + [(p, rng.choice(speakers)) for p in PARAPHRASES]
    rng.shuffle(out)
    return out


def warm_search(root: Path, n: int, since: str) -> tuple[list[list[object]], float, str]:
    """Rows of (case, p50 ms, p95 ms, mean hits), hybrid's p50, and where one hybrid
    query's time goes when that misses the target."""
    kb = KB.open(root)
    warm: dict[Any, Any] = {}
    qs = queries(access.open_index(kb, warm), n)
    cases: dict[str, Callable[[str, str], SearchRequest]] = {
        "hybrid": lambda q, who: SearchRequest(q, log=False),
        "fts": lambda q, who: SearchRequest(q, mode="fts", log=False),
        "vector": lambda q, who: SearchRequest(q, mode="vector", log=False),
        "hybrid --speaker": lambda q, who: SearchRequest(q, speakers=(who,), log=False),
        f"hybrid --since {since}": lambda q, who: SearchRequest(q, since=since, log=False),
        # the same queries again: a server that has read every word's postings (the
        # first hybrid row reads each word's the first time it is asked)
        "hybrid, again": lambda q, who: SearchRequest(q, log=False),
    }
    rows: list[list[object]] = []
    for label, request in cases.items():
        search(kb, request(*qs[0]), warm=warm)  # untimed: the first call of each case
        times, hits = [], 0
        for q, who in qs:
            t0 = time.perf_counter()
            hits += len(search(kb, request(q, who), warm=warm)["results"])
            times.append((time.perf_counter() - t0) * 1000)
        rows.append(
            [
                label,
                f"{percentile(times, 50):.1f}",
                f"{percentile(times, 95):.1f}",
                f"{hits / len(qs):.1f}",
            ]
        )
    hybrid_p50 = float(str(rows[0][1]))
    where = ""
    if hybrid_p50 > TARGET_SEARCH_MS:
        where = profile(kb, warm, [q for q, _ in qs[:50]])
    return rows, hybrid_p50, where


def profile(kb: KB, warm: dict[Any, Any], qs: list[str]) -> str:
    """The hybrid search's time per query by function (cProfile over `qs`, which
    inflates every call alike): vouch's functions by cumulative time, all by own time."""
    prof = cProfile.Profile()
    prof.enable()
    for q in qs:
        search(kb, SearchRequest(q, log=False), warm=warm)
    prof.disable()
    stats: dict[Any, Any] = pstats.Stats(prof).stats  # type: ignore[attr-defined]

    def name(key: tuple[str, int, str]) -> str:
        path, line, func = key
        short = path.split("/vouch/", 1)[-1] if "/vouch/" in path else Path(path).name
        return f"`{func}` ({short}:{line})" if line else f"`{func}`"

    def top(pick: int, index: int, only_vouch: bool) -> list[list[object]]:
        keys = [k for k in stats if not only_vouch or "/vouch/" in k[0]]
        keys.sort(key=lambda k: -stats[k][index])
        return [
            [name(k), stats[k][1] // len(qs), f"{stats[k][index] * 1000 / len(qs):.2f}"]
            for k in keys[:pick]
        ]

    return (
        f"cProfile over {len(qs)} hybrid queries, ms per query (profiled, so inflated):\n\n"
        + table(["vouch function", "calls/query", "cumulative ms"], top(16, 3, True))
        + "\n\n"
        + table(["function", "calls/query", "own ms"], top(10, 2, False))
    )


def additions(root: Path, runs: int, seed: int) -> list[float]:
    """Cold `vouch source add FILE --type transcript` of `runs` new 700-turn transcripts
    (after one untimed), each written into the repository first, as a person would."""
    inbox = root / "incoming"
    inbox.mkdir(exist_ok=True)
    walls: list[float] = []
    for k in range(runs + 1):
        path = inbox / f"call-{seed + k}.txt"
        path.write_text(transcript(seed + k), encoding="utf-8")
        cmd = [vouch_exe(), "source", "add", str(path), "--type", "transcript", "--kb", str(root)]
        wall, _cpu = time_cold_cpu(cmd, 1, warmup=0)
        walls += wall if k else []
    return walls


# -- report ----------------------------------------------------------------------------------
def shown(path: Path) -> Path:
    root = Path(__file__).resolve().parents[1]
    return path.relative_to(root) if path.is_relative_to(root) else path


def verdict(ok: bool) -> str:
    return "met" if ok else "**MISSED**"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rebuild-runs", type=int, default=3)
    parser.add_argument("--add-runs", type=int, default=5)
    parser.add_argument("--out", type=Path, help="default: bench/out/turns-<turns>")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    args = parser.parse_args()
    out = (args.out or Path(__file__).resolve().parent / "out" / f"turns-{args.turns}").resolve()
    if out.exists():
        raise SystemExit(f"{out} exists: pass a fresh --out (delete it, not before timing)")
    load_before = load_average()
    files = -(-args.turns // TURNS_PER_TRANSCRIPT)
    corpora = build(out, files)
    print(json.dumps({k: {n: v for n, v in c.items() if n != "root"} for k, c in corpora.items()}))
    rebuilds(corpora, args.rebuild_runs)
    turns, docs = corpora["turns"], corpora["docs"]
    since = (FIRST_DAY + timedelta(days=DAYS_APART * int(0.75 * files))).isoformat()
    search_rows, hybrid_p50, where = warm_search(turns["root"], args.queries, since)
    add_empty = additions(new_kb(out / "empty").root, args.add_runs, 50_000)
    add_big = additions(turns["root"], args.add_runs, 60_000)

    def p50(xs: list[float]) -> float:
        return percentile(xs, 50)

    ratio = p50(turns["wall"]) / p50(docs["wall"])
    cpu_ratio = p50(turns["cpu"]) / p50(docs["cpu"])
    stages = list(dict.fromkeys(s for c in corpora.values() for s in c["stages"]))
    rebuild_rows = [
        [
            label,
            c["files"],
            f"{c['chunks']:,}",
            c["mb"],
            " ".join(f"{w:.1f}" for w in c["wall"]),
            f"{p50(c['wall']):.1f}",
            f"{p50(c['cpu']):.1f}",
            " / ".join(f"{c['stages'].get(s, 0):.1f}" for s in stages),
        ]
        for label, c in corpora.items()
    ]
    add_rows = [
        [where_to, " ".join(f"{w:.2f}" for w in walls), f"{p50(walls):.2f}"]
        for where_to, walls in (
            ("an empty knowledge base", add_empty),
            (f"the {turns['chunks']:,}-turn knowledge base", add_big),
        )
    ]
    add_p50 = max(p50(add_empty), p50(add_big))
    command = "python bench/bench_turns.py " + " ".join(sys.argv[1:])
    text = "\n\n".join(
        [
            f"{conditions(load_before)}\n\nCommand: `{command.strip()}` (knowledge bases in "
            f"`{shown(out)}`).",
            f"**Rebuild**, cold `vouch index rebuild`, alternating, {args.rebuild_runs} runs "
            "each after one untimed build (whose stages are shown):",
            table(
                [
                    "corpus",
                    "sources",
                    "chunks",
                    "MB",
                    "wall s",
                    "p50 wall s",
                    "p50 CPU s",
                    "stages s (" + " / ".join(stages) + ")",
                ],
                rebuild_rows,
            ),
            f"**Warm search** over the turns, in process, {args.queries} queries, top 10:",
            table(["case", "p50 ms", "p95 ms", "hits/query"], search_rows),
            f"**Registering a {TURNS_PER_TRANSCRIPT}-turn transcript**, cold "
            "`vouch source add FILE --type transcript`:",
            table(["into", "wall s", "p50 s"], add_rows),
            "Targets:\n"
            f"- warm search ≤ {TARGET_SEARCH_MS:.0f} ms p50 at 100k turns: hybrid "
            f"{hybrid_p50:.1f} ms — {verdict(hybrid_p50 <= TARGET_SEARCH_MS)};\n"
            f"- registering a 700-turn transcript ≤ {TARGET_ADD_S:.0f} s: {add_p50:.2f} s p50 "
            f"(the slower of the two) — {verdict(add_p50 <= TARGET_ADD_S)};\n"
            f"- rebuild within 10 % of the document corpus: p50 wall {ratio:.2f}× — "
            f"{verdict(ratio <= TARGET_RATIO)}; p50 CPU {cpu_ratio:.2f}× — "
            f"{verdict(cpu_ratio <= TARGET_RATIO)}.",
            where,
        ]
    )
    print(text)
    if args.record:
        append_results("Transcripts at scale: 100k turns (issue 19)", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
