"""The values the search pipeline (`vouch.search.engine`) passes from stage to stage: each
stage takes one and returns the next, which keeps the one before it (a query's whole
history is in the last), in the order the stages run."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from vouch.core.progress import Progress
    from vouch.index.filters import Filters
    from vouch.index.lexical import LexicalHit
    from vouch.index.turnmap import TurnLinks
    from vouch.search.access import SearchIndex
    from vouch.search.fusion import Listed
    from vouch.search.pending import Pending
    from vouch.search.ranked import Ranked
    from vouch.search.request import SearchRequest
    from vouch.search.tuning import Tuning
    from vouch.store.kb import KB


class Asked(NamedTuple):
    """What the caller passed: the input of `parse`."""

    kb: KB
    request: SearchRequest
    warm: dict[str, Any]
    progress: Progress | None
    started: float  # perf_counter at the call (the trace's total)


class Query(NamedTuple):
    """`parse`: the request checked and filled in, with the ranking's knobs."""

    asked: Asked
    req: SearchRequest  # top and rrf_k set, mode "fts" in a lexical-only knowledge base
    tuning: Tuning
    timer: Timer


class Scope(NamedTuple):
    """`filter_scope`: the open index, the filters every channel applies inside it, an
    open proposal's chunks (`--include-pending`), and where in the ranked list this page
    starts (the cursor: revision, fingerprint, offset and candidate depth)."""

    query: Query
    search_index: SearchIndex
    filters: Filters
    pending: Pending | None
    revision: str
    fingerprint: str
    offset: int
    depth: int


class Channels(NamedTuple):
    """`channels`: each channel's candidates, best first (None: it did not run)."""

    scope: Scope
    lexical: list[LexicalHit] | None
    vector: list[tuple[int, float]] | None


class Fusion(NamedTuple):
    """`fuse` and the stages that rescore or cut its list: the ranked candidates, the
    channel weights and the lexical coverage they follow, transcript turns' own weights
    and links (when any turn was found), and whether this is the tuned default ranking
    (convex fusion, turn context, prior) or rank fusion (RRF, one channel)."""

    found: Channels
    ranked: Ranked | Listed  # columns; objects for one lexical channel (no numpy)
    weights: dict[str, float]
    coverage: float | None
    held: int
    default: bool
    links: TurnLinks | None = None
    turn_weights: dict[str, float] | None = None


class Page(NamedTuple):
    """`page`: the page's hits as the response shows them, before the token budget."""

    fusion: Fusion
    results: list[dict[str, Any]]


class Kept(NamedTuple):
    """`budget`: the hits the token budget keeps, and the cursor to the next page."""

    page: Page
    results: list[dict[str, Any]]
    truncated: bool
    next_cursor: str | None


class Logged(NamedTuple):
    """`log_search`'s input: the call, and its response or the exception it raised."""

    kb: KB
    request: SearchRequest
    started: float
    response: dict[str, Any] | None
    error: BaseException | None


class Timer:
    """Milliseconds spent per stage of one search (the trace's `timings`)."""

    __slots__ = ("marks",)

    def __init__(self) -> None:
        self.marks: dict[str, float] = {}

    def add(self, name: str, started: float) -> None:
        self.marks[name] = self.marks.get(name, 0.0) + (time.perf_counter() - started) * 1000

    def ms(self, name: str) -> int:
        return round(self.marks.get(name, 0.0))
