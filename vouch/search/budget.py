"""A token budget for search results, estimated as characters / 4 (no tokenizer).

Results are kept in rank order until the budget is spent. The result that does not fit
is shortened to what is left (its `text` cut, snippet kept) when at least `MIN_TEXT`
characters of its text fit, else dropped; everything after it is left for the next page.
A budget too small for even the first result with some text is refused (E100), so a
caller following `next_cursor` always makes progress and never gets a result that is only
an ellipsis. `truncated` says the budget changed the answer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from vouch.errors import UsageError

CHARS_PER_TOKEN = 4
ELLIPSIS = "…"
MIN_TEXT = 40  # characters of a shortened result's text (all of it when shorter)


def estimate_tokens(value: Any) -> int:
    """Tokens of a value as it is sent: its compact JSON, characters / 4, rounded up."""
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    )
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class Budgeted(NamedTuple):
    """The results a token budget keeps, whether it cut any, and the tokens used."""

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
        shortened = _shorten(result, max_tokens - used)
        if shortened is not None:
            kept.append(shortened)
            used += estimate_tokens(shortened)
        elif not kept:
            need = estimate_tokens({**result, "text": str(result.get("text") or "")[:MIN_TEXT]})
            raise UsageError(
                f"--max-tokens {max_tokens} cannot hold one result (the next needs about "
                f"{need} tokens with its text cut short)",
                hint=f"ask for --max-tokens {need} or more",
            )
        return Budgeted(kept, True, used)
    return Budgeted(kept, False, used)


def _shorten(result: dict[str, Any], tokens_left: int) -> dict[str, Any] | None:
    """The result with `text` cut to fit `tokens_left` keeping at least `MIN_TEXT`
    characters of it, or None when that does not fit."""
    room = tokens_left * CHARS_PER_TOKEN - len(
        json.dumps(_textless(result), ensure_ascii=False, separators=(",", ":"))
    )
    text = str(result.get("text") or "").rstrip()
    least = min(len(text), MIN_TEXT)
    cut = min(len(text), room)
    # JSON escaping can make a character cost more than one: shrink until it fits.
    while text and cut >= least:
        piece = text[:cut].rstrip()
        candidate = {**result, "text": piece + (ELLIPSIS if cut < len(text) else "")}
        if len(piece) >= least and estimate_tokens(candidate) <= tokens_left:
            return candidate
        cut = max(cut * 3 // 4, least) if cut > least else least - 1
    return None


def _textless(result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "text": ""}
