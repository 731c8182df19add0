"""Source passages for a task no approved knowledge answers (`kb.context`, `unreviewed`).

A context pack holds approved knowledge only. When none of it matches a task, the
answer is not a dead end: the best passages of the registered sources come beside the
empty pack, each marked `reviewed: false` — text captured from a file, which nobody has
vouched for — with the citation that makes one reviewed knowledge (a claim proposed
citing it, approved by a reviewer: `NEXT_STEP`).

Passages are found as a search for the task over sources, keeping the hits the task's
words match (any of them: the lexical channel's list) and those whose embedding is nearly
as close as the closest (the pack's own rule), at most MAX_PASSAGES, packed into the
pack's character budget by whole lines: a passage that does not fit keeps the lines
around its line sharing most words with the task, and its citation names exactly the
lines shown.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from vouch.kinds.source import shown
from vouch.search.engine import SearchRequest, search
from vouch.store.kb import KB

MAX_PASSAGES = 3
NEXT_STEP = (
    "These passages are unreviewed source text, not knowledge: to make one reviewed "
    "knowledge, propose a claim citing it (vouch propose-claim --text '...' --source "
    "{shell}; kb.propose_claim with evidence [{quoted}]) and have a reviewer approve it "
    "(vouch approve PROPOSAL)."
)


def best(
    kb: KB,
    task: str,
    max_chars: int,
    *,
    relative_cosine: float,
    warm: dict[str, Any] | None = None,
    transport: str = "cli",
    refresh: bool = True,
) -> list[dict[str, Any]]:
    """Up to MAX_PASSAGES source passages for `task`, best first, their text at most
    `max_chars` in all (`refresh` false: from the index as it is)."""
    response = search(
        kb,
        SearchRequest(
            query=task,
            top=MAX_PASSAGES * 3,
            kinds=("source",),
            trace=True,
            log=False,  # the task was logged once, by the pack's own search
            transport=transport,
            refresh=refresh,
        ),
        warm=warm,
    )
    worded = {h["chunk_id"] for h in response["trace"]["lexical"]}  # the task's words match
    cosines = {v["chunk_id"]: v["cosine"] for v in response["trace"]["vector"]}
    floor = relative_cosine * max(cosines.values(), default=0.0)
    out: list[dict[str, Any]] = []
    left = max_chars
    seen: set[tuple[str, Any]] = set()
    for hit in response["results"]:
        key = (hit["id"], tuple(hit["source"].get("lines") or ()))
        if key in seen or len(out) == MAX_PASSAGES or left <= 0:
            continue
        if hit["chunk_id"] not in worded and cosines.get(hit["chunk_id"], 0.0) < floor:
            continue
        seen.add(key)
        found = _passage(kb, hit, task, left)
        if found is not None:
            out.append(found)
            left -= len(found["text"])
    return out


NOTHING = (
    "No source passage matches either: register the documents that answer this task "
    "(vouch source add -r DIR; kb.register_source_from_path), then propose claims citing "
    "them for review."
)


def next_step(passages: list[dict[str, Any]]) -> str:
    """One line on how to make a passage reviewed knowledge, citing the first one; or,
    with no passage, on registering the documents that would hold one."""
    if not passages:
        return NOTHING
    first = passages[0]
    cite = str(first.get("cite_path") or first["cite"])
    return NEXT_STEP.format(shell=shlex.quote(cite), quoted=json.dumps(cite, ensure_ascii=False))


def _passage(kb: KB, hit: dict[str, Any], task: str, budget: int) -> dict[str, Any] | None:
    """A hit as a passage of at most `budget` characters (whole lines), or None when
    not even its first line fits."""
    src = hit["source"]
    lines = src.get("lines")
    text, cite = str(hit["text"]), str(hit["cite"])
    span = cite.partition(":")[2]
    if lines and span.startswith("L"):
        start, end = int(lines[0]), int(lines[1])
        content = kb.source_content(hit["id"])
        if content is not None:
            every = content.decode("utf-8", "replace").split("\n")
            text = "\n".join(every[start - 1 : end])
        first, last = _window(text.split("\n"), task, budget)
        if first > last:
            return None
        text = "\n".join(text.split("\n")[first : last + 1])
        start, end = start + first, start + last
        span = f"L{start}-L{end}" if end > start else f"L{start}"
        lines = [start, end]
        cite = f"{hit['id']}:{span}"
    elif len(text) > budget:
        return None
    return {
        "kind": "source",
        "id": hit["id"],
        "title": src.get("title"),
        "locator": src.get("locator"),
        "section": src.get("section"),
        "lines": [lines[0], lines[1]] if lines else None,  # as a search hit says them
        "cite": cite,
        "cite_path": shown(src.get("locator"), span or None) if hit.get("cite_path") else None,
        "text": text,
        "score": hit["score"],
        "reviewed": False,
    }


def _window(lines: list[str], task: str, budget: int) -> tuple[int, int]:
    """(first, last) indexes of the lines to show within `budget` characters: all of
    them when they fit, else from the line sharing most words with the task onwards,
    then back before it while they fit; first > last when not even that line fits."""
    if len("\n".join(lines)) <= budget:
        return 0, len(lines) - 1
    words = {w for w in re.findall(r"\w+", task.lower()) if len(w) > 1}
    overlap = [len(words & set(re.findall(r"\w+", line.lower()))) for line in lines]
    best = overlap.index(max(overlap)) if overlap else 0
    first = last = best
    used = len(lines[best])
    if used > budget:
        return 1, 0
    while last + 1 < len(lines) and used + 1 + len(lines[last + 1]) <= budget:
        last += 1
        used += 1 + len(lines[last])
    while first > 0 and used + 1 + len(lines[first - 1]) <= budget:
        first -= 1
        used += 1 + len(lines[first])
    return first, last
