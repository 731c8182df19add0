"""The human search format of spec/search-output.md (informative: people read it, scripts
parse the JSON)::

    Search: "install git" (47 matches, showing top 10)
    1. [3.111] Install git with the package manager. [claim/fact] [git] install-git-with-…-1a2b3c4d
    Install git with the package manager.
    evidence: evidence-5e6f7a8b
    2. [0.031] [unreviewed source] Git Guide docs/git.pdf (p.12) [source/pdf] 4f2a9c01d3e5
    To install the latest version of git from source...
    3. [0.025] [unreviewed source] docs/t.md:L40-L52 §Retries [source/file] 9b1e77c2a0f4:L40-L52
    ...

A hit nobody reviewed — a source's raw text, an open proposal (`--include-pending`), a
work-tree edit HEAD does not hold — says so at the start of its line (`unreviewed`).
"""

from __future__ import annotations

import re
from typing import Any

from vouch.core.ids import is_source_id
from vouch.core.printable import escaped

PREVIEW_CHARS = 160
_MARK = re.compile(r"\[/?MATCH\]")


def preview(result: dict[str, Any], width: int = PREVIEW_CHARS) -> str:
    """One line of text: the snippet without its markers, else the start of the text."""
    text = _MARK.sub("", str(result.get("snippet") or "")) or str(result.get("text") or "")
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 3].rstrip() + "..."


def heading(rank: int, result: dict[str, Any]) -> str:
    """One line a hit: a file's name or a title may hold a line break (`escaped`)."""
    src = result.get("source") or {}
    by_path = result.get("cite_path")
    parts = [f"{rank}. [{result['score']:.3f}]"]
    if result.get("kb"):  # a search across knowledge bases: whose hit it is
        parts.append(f"{{{result['kb']}}}")
    label = unreviewed(result)
    if label:
        parts.append(f"[{label}]")
    parts.append(_named(src, by_path) or result["id"])
    if src.get("page") is not None:
        parts.append(f"(p.{src['page']})")
    if src.get("section"):
        parts.append(f"§{src['section']}")
    if src.get("lines") and not by_path:
        parts.append(f"L{src['lines'][0]}-L{src['lines'][1]}")
    kind_type = "/".join(x for x in (result.get("kind"), src.get("type")) if x)
    parts.append(f"[{kind_type}]")
    if src.get("tags"):
        parts.append("[" + ", ".join(src["tags"]) + "]")
    if result.get("status") and result.get("status") not in ("active", "working", ""):
        parts.append(f"({result['status']})")
    if result.get("pending"):
        parts.append(f"(pending {result.get('proposal_id') or ''})".replace(" )", ")"))
    if result.get("uncommitted"):
        parts.append("(uncommitted edit: not reviewed)")
    if result.get("drifted"):
        parts.append("(cited lines changed: `vouch lint`)")
    if result.get("confidence") is not None:
        parts.append(f"(confidence {result['confidence']})")
    # a source id shortened to a prefix `--source` takes back; other ids whole
    cite = str(result.get("cite") or "")
    if result.get("kind") == "source" and ":" in cite:
        parts.append(short_id(result["id"]) + cite[len(result["id"]) :])
    else:
        parts.append(short_id(result["id"]))
    return escaped(" ".join(parts))


def unreviewed(result: dict[str, Any]) -> str | None:
    """What marks a hit as text nobody reviewed, at the start of its line: a work-tree
    edit HEAD does not hold, an open proposal, a source's raw text; None for approved
    knowledge."""
    if result.get("uncommitted"):
        return "unreviewed edit"
    if result.get("pending"):
        return "unreviewed proposal"
    if result.get("kind") == "source":
        return "unreviewed source"
    return None


def _named(src: dict[str, Any], by_path: object) -> str:
    """A source hit by its path and lines (`docs/a.rst:L5-L9`, what `--source` takes),
    after its title when that is more than the file's name; other hits by their title."""
    title = str(src.get("title") or "")
    if not by_path:
        return title
    locator = str(src.get("locator") or "")
    if not title or title in (locator, locator.rsplit("/", 1)[-1]):
        return str(by_path)
    return f"{title} {by_path}"


def short_id(object_id: str) -> str:
    """12 hex digits of a source id (a prefix every command takes back); others whole."""
    return object_id[:12] if is_source_id(object_id) else object_id


def cited(result: dict[str, Any]) -> str | None:
    """The evidence line of a claim, page or relation hit."""
    ids = [short_id(i) for i in result.get("evidence") or []]
    return "evidence: " + ", ".join(ids) if ids else None


def render(response: dict[str, Any]) -> str:
    results = response["results"]
    head = (
        f'Search: "{response["query"]}" ({_count(response["total_matches"], "match", "es")}, '
        f"showing {_showing(response)})"
    )
    lines = [head]
    start = int(response.get("offset") or 0)
    for n, result in enumerate(results, start + 1):
        lines.append(heading(n, result))
        lines.append(preview(result))
        evidence = cited(result)
        if evidence:
            lines.append(evidence)
    if not results:
        lines.append("No results.")
    for base in response.get("bases") or ():  # across knowledge bases: what was not as asked
        if base.get("state") != "fresh":
            lines.append(escaped(f"{base['name']}: {base['state']} - {base.get('detail') or ''}"))
    if response.get("truncated"):
        lines.append("(shortened to fit --max-tokens)")
    if response.get("next_cursor"):
        lines.append(f"More: --cursor {response['next_cursor']}")
    if response.get("trace"):
        from vouch.search.tracing import lines as traced

        lines += traced(response["trace"], str(response.get("mode") or "hybrid"))
        t = response["trace"]["timing"]
        lines.append(
            f"Timing: lexical {t['lexical_ms']} ms, vector {t['vector_ms']} ms, "
            f"fusion {t['fusion_ms']} ms, total {t['total_ms']} ms"
        )
    return "\n".join(lines)


def _count(n: int, word: str, plural: str = "s") -> str:
    return f"{n} {word}{'' if n == 1 else plural}"


def _showing(response: dict[str, Any]) -> str:
    offset = int(response.get("offset") or 0)
    returned = response["returned"]
    if offset:
        return f"{offset + 1}-{offset + returned}"
    return f"top {returned}"
