"""The human search format of spec/search-output.md (informative: people read it, scripts
parse the JSON)::

    Search: "install git" (47 matches, showing top 10)
    1. [0.031] Git Admin Guide (p.12) [source/pdf] [git, admin] 4f2a…
    To install the latest version of git from source...
"""

from __future__ import annotations

import re
from typing import Any

PREVIEW_CHARS = 160
_MARK = re.compile(r"\[/?MATCH\]")


def preview(result: dict[str, Any], width: int = PREVIEW_CHARS) -> str:
    """One line of text: the snippet without its markers, else the start of the text."""
    text = _MARK.sub("", str(result.get("snippet") or "")) or str(result.get("text") or "")
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 3].rstrip() + "..."


def heading(rank: int, result: dict[str, Any]) -> str:
    src = result.get("source") or {}
    parts = [f"{rank}. [{result['score']:.3f}] {src.get('title') or result['id']}"]
    if src.get("page") is not None:
        parts.append(f"(p.{src['page']})")
    if src.get("section"):
        parts.append(f"§{src['section']}")
    kind_type = "/".join(x for x in (result.get("kind"), src.get("type")) if x)
    parts.append(f"[{kind_type}]")
    if src.get("tags"):
        parts.append("[" + ", ".join(src["tags"]) + "]")
    if result.get("status") and result.get("status") not in ("active", "working", ""):
        parts.append(f"({result['status']})")
    if result.get("pending"):
        parts.append(f"(pending {result.get('proposal_id') or ''})".replace(" )", ")"))
    short = result["id"] if len(result["id"]) < 40 else result["id"][:12] + "…"
    parts.append(short)
    return " ".join(parts)


def render(response: dict[str, Any]) -> str:
    results = response["results"]
    head = (
        f'Search: "{response["query"]}" ({response["total_matches"]} matches, '
        f"showing {_showing(response)})"
    )
    lines = [head]
    start = int(response.get("offset") or 0)
    for n, result in enumerate(results, start + 1):
        lines.append(heading(n, result))
        lines.append(preview(result))
    if not results:
        lines.append("No results.")
    if response.get("truncated"):
        lines.append("(shortened to fit --max-tokens)")
    if response.get("next_cursor"):
        lines.append(f"More: --cursor {response['next_cursor']}")
    if response.get("trace"):
        t = response["trace"]["timing"]
        lines.append(
            f"Timing: lexical {t['lexical_ms']} ms, vector {t['vector_ms']} ms, "
            f"fusion {t['fusion_ms']} ms, total {t['total_ms']} ms"
        )
    return "\n".join(lines)


def _showing(response: dict[str, Any]) -> str:
    offset = int(response.get("offset") or 0)
    returned = response["returned"]
    if offset:
        return f"{offset + 1}-{offset + returned}"
    return f"top {returned}"
