"""What a context pack holds and how it is filled: candidates in rank order, packed
greedily into a character budget, cut only after a whole sentence (at a word, marked
"…", only when `min_items` shares the budget and one sentence alone exceeds a share).
`vouch.search.context` finds the candidates and resolves them to items."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ELLIPSIS = "…"
# where a sentence ends: terminal punctuation (and closing quotes/brackets) before
# whitespace or the end, or a line break (a list item, a heading, a table row)
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s|$)")


@dataclass
class Candidate:
    kind: str
    id: str
    score: float
    section: str | None = None  # a page's section heading ("" for text before the first)
    via: str | None = None  # the hit whose neighbourhood brought it
    rank: int = 0
    text: str | None = None  # the index's text of a claim or entity hit

    def may_fit(self, left: int) -> bool:
        """False when the index's text shows the item cannot fit in `left` characters,
        so its file need not be read (the index holds what the file says)."""
        return self.text is None or bool(sentence_prefix(self.text, left))


@dataclass
class Item:
    kind: str
    id: str
    title: str
    text: str
    status: str
    score: float
    citations: list[dict[str, Any]]
    type: str = ""
    section: str | None = None
    via: str | None = None
    rank: int = 0

    def to_json(self, text: str) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": self.id,
            "title": self.title,
            "text": text,
            "status": self.status,
            "score": round(self.score, 6),
            "citations": self.citations,
            "type": self.type,
            "section": self.section,
            "via": self.via,
            "partial": text != self.text,
        }


def sentence_prefix(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` characters that ends at the end
    of a sentence or a line, and says something more than a heading ("" when not even
    the first sentence fits)."""
    if len(text) <= limit:
        return text
    # the whole text is scanned: a "." just before the limit ends a sentence only if
    # what follows it is a space, which a scan cut at the limit could not see
    ends = [m.end() for m in _SENTENCE_END.finditer(text) if m.end() <= limit]
    ends += [m.start() for m in re.finditer(r"\n", text[: limit + 1])]
    for end in sorted(ends, reverse=True):
        best = text[:end].rstrip()
        if end <= limit and any(
            line.strip() and not line.lstrip().startswith("#") for line in best.split("\n")
        ):
            return best
    return ""


def word_prefix(text: str, limit: int) -> str:
    """At most `limit` characters of `text` cut at a word, ending with "…" (the last
    resort of `min_items`, when one sentence alone exceeds an item's share)."""
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return ELLIPSIS[:limit]  # no room for a word: never a letter cut from one
    head = text[: limit - len(ELLIPSIS)]
    whole_word = text[len(head)].isspace() or head[-1].isspace()
    if not whole_word and len(head.split()) > 1:
        head = head.rsplit(None, 1)[0]  # drop the word cut in two
    return head.rstrip() + ELLIPSIS


class Resolved:
    """Candidates resolved to items at most once each (None: hidden, broken, uncited)."""

    def __init__(self, resolve: Callable[[Candidate], Item | None]):
        self._resolve = resolve
        self._done: dict[int, Item | None] = {}

    def __call__(self, c: Candidate) -> Item | None:
        if id(c) not in self._done:
            self._done[id(c)] = self._resolve(c)
        return self._done[id(c)]


def pack(
    candidates: list[Candidate], resolve: Resolved, max_chars: int, min_items: int
) -> tuple[list[tuple[Item, str]], bool]:
    """Greedy packing in rank order; see the module docstring."""
    chosen, truncated = _greedy(candidates, resolve, max_chars)
    if len(chosen) >= min_items:
        return chosen, truncated
    firsts: list[Item] = []
    for c in candidates:
        item = resolve(c)
        if item is not None:
            firsts.append(item)
            if len(firsts) == min_items:
                break
    if len(firsts) <= len(chosen):
        return chosen, truncated  # fewer items are relevant than min_items asks for
    count = min(len(firsts), max_chars)
    share = max_chars // count
    chosen = [
        (item, sentence_prefix(item.text, share) or word_prefix(item.text, share))
        for item in firsts[:count]
    ]
    used = sum(len(cut) for _, cut in chosen)
    taken = {(item.kind, item.id, item.section) for item, _ in chosen}
    rest = [c for c in candidates if (c.kind, c.id, c.section) not in taken]
    more, _ = _greedy(rest, resolve, max_chars - used)
    chosen = sorted([*chosen, *more], key=lambda pair: pair[0].rank)
    packed = {(item.kind, item.id, item.section) for item, _ in chosen}
    truncated = any(cut != item.text for item, cut in chosen) or any(
        resolve(c) is not None for c in candidates if (c.kind, c.id, c.section) not in packed
    )
    return chosen, truncated


def _greedy(
    candidates: list[Candidate], resolve: Resolved, budget: int
) -> tuple[list[tuple[Item, str]], bool]:
    """Each candidate in rank order, whole or cut after a whole sentence, while it fits.

    A candidate whose index text shows it cannot fit is skipped without reading its
    file — unless nothing was left out yet, when it is read to learn whether it is a
    real item (so `truncated` is exact)."""
    chosen: list[tuple[Item, str]] = []
    truncated = False
    left = budget
    for c in candidates:
        if left <= 0 and truncated:
            break  # full, and known to have left something out
        if not c.may_fit(left):
            truncated = truncated or resolve(c) is not None
            continue
        item = resolve(c)
        if item is None:
            continue
        cut = sentence_prefix(item.text, left)
        if not cut:
            truncated = True
            continue
        truncated = truncated or cut != item.text
        chosen.append((item, cut))
        left -= len(cut)
    return chosen, truncated
