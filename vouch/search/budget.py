"""A token budget for search results, estimated as characters / 4 (no tokenizer).

Results are kept in rank order until the budget is spent. The result that does not fit
is shortened to what is left (its `text` cut, snippet kept), and everything after it is
left for the next page. At least one result is always returned, so a caller following
`next_cursor` always makes progress. `truncated` says the budget changed the answer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4
ELLIPSIS = "…"


def estimate_tokens(value: Any) -> int:
    """Tokens of a value as it is sent: its compact JSON, characters / 4, rounded up."""
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    )
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Budgeted:
    results: list[dict[str, Any]]
    truncated: bool
    tokens: int | None  # None when no budget was asked for


def apply_budget(results: Sequence[dict[str, Any]], max_tokens: int | None) -> Budgeted:
    if max_tokens is None:  # no budget: nothing to count (JSON-encoding every result costs)
        return Budgeted(list(results), False, None)
    if max_tokens < 1:
        raise ValueError("max_tokens must be >= 1")
    kept: list[dict[str, Any]] = []
    used = 0
    for result in results:
        cost = estimate_tokens(result)
        if used + cost <= max_tokens:
            kept.append(result)
            used += cost
            continue
        left = max_tokens - used
        if not kept or left > 0:
            shortened = _shorten(result, left)
            if shortened is not None or not kept:
                kept.append(shortened if shortened is not None else _textless(result))
                used += estimate_tokens(kept[-1])
        return Budgeted(kept, True, used)
    return Budgeted(kept, False, used)


def _shorten(result: dict[str, Any], tokens_left: int) -> dict[str, Any] | None:
    """The result with `text` cut to fit `tokens_left`, or None when nothing useful fits."""
    room = tokens_left * CHARS_PER_TOKEN - len(
        json.dumps(_textless(result), ensure_ascii=False, separators=(",", ":"))
    )
    text = str(result.get("text") or "")
    if room < 1 or not text:
        return None
    # JSON escaping can make a character cost more than one: shrink until it fits.
    cut = min(len(text), room)
    while cut > 0:
        candidate = {**result, "text": text[:cut].rstrip() + ELLIPSIS}
        if estimate_tokens(candidate) <= tokens_left:
            return candidate
        cut = cut * 3 // 4
    return None


def _textless(result: dict[str, Any]) -> dict[str, Any]:
    """The smallest useful form of a result: no text, so the caller sees what matched."""
    return {**result, "text": ELLIPSIS}
