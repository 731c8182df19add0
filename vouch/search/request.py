"""One search as a caller asks for it (`SearchRequest`), checked against the knowledge
base's configuration before the pipeline (`vouch.search.engine`) runs it."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from vouch.errors import UsageError
from vouch.search import query as queries
from vouch.search.fusion import DEFAULT_K

if TYPE_CHECKING:
    from vouch.core.config import Config

MODES = ("hybrid", "fts", "vector")
SEARCH_KINDS = ("claim", "page", "entity", "relation", "source")
# Shown only when --status asks for them (spec: approved, current knowledge by default).
HIDDEN_STATUSES = ("superseded", "archived", "redacted")
MAX_TOP = 10_000  # results per page; more pages come through the cursor
_ISO = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2}(?:T\d{2}(?::\d{2}(?::\d{2})?)?)?)?)?\Z")


class SearchRequest(NamedTuple):
    """One search as a caller asks for it; `checked` validates it and fills defaults."""

    query: str
    mode: str = "hybrid"
    top: int | None = None  # None: search.default_top
    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    speakers: tuple[str, ...] = ()  # transcript turns by these speakers (issue 19)
    since: str | None = None  # ... from this ISO date or time on
    until: str | None = None  # ... up to and including this one
    threshold: float | None = None
    rrf_k: float | None = None  # None: search.rrf_k
    cursor: str | None = None
    max_tokens: int | None = None
    trace: bool = False
    include_pending: bool = False
    weights: Mapping[str, float] | None = None  # None: tuned defaults; {} equal weights
    log: bool = True
    transport: str = "cli"
    refresh: bool = True  # False: the index as it is (another knowledge base's)
    citations: bool = True  # False: hits without evidence/confidence/drifted (added later)

    def checked(self, config: Config) -> SearchRequest:
        """Validated, with config defaults filled in; raise E004 / E100 on bad input."""
        text = queries.normalize(self.query)
        if self.mode not in MODES:
            raise UsageError(f"unknown search mode {self.mode!r}", hint="hybrid, fts or vector")
        top = self.top if self.top is not None else config.typed("search.default_top", 10, int)
        if not 1 <= top <= MAX_TOP:
            raise UsageError(
                f"--top must be between 1 and {MAX_TOP}",
                hint="page through more results with --cursor",
            )
        k = self.rrf_k if self.rrf_k is not None else config.typed("search.rrf_k", DEFAULT_K, float)
        if k < 0:
            raise UsageError("--rrf-k must be >= 0")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UsageError("--max-tokens must be at least 1")
        for kind in self.kinds:
            if kind not in SEARCH_KINDS:
                raise UsageError(
                    f"cannot search kind {kind!r}", hint="kinds: " + ", ".join(SEARCH_KINDS)
                )
        for flag, values, enum in (
            ("--status", self.statuses, "STATUSES"),
            ("--type", self.types, "TYPES"),
        ):
            for value in values:  # the kinds' modules load only when a filter is given
                if value not in (known := _known(enum)):
                    raise UsageError(
                        f"unknown {flag[2:]} {value!r}", hint=f"{flag}: " + ", ".join(known)
                    )
        check_time("--since", self.since)
        check_time("--until", self.until)
        for flag, number in (("--threshold", self.threshold), ("--rrf-k", k)):
            if number is not None and not math.isfinite(number):
                raise UsageError(f"{flag} must be a finite number")
        return self._replace(query=text, top=top, rrf_k=k)


def check_time(flag: str, value: str | None) -> None:
    """`--since` / `--until`: an ISO date or date-time (2023-05, 2023-05-08T10:30)."""
    if value is not None and not _ISO.match(value):
        raise UsageError(
            f"{flag} {value[:40]!r} is not an ISO date",
            hint="e.g. 2023-05, 2023-05-08 or 2023-05-08T10:30",
        )


def _known(enum: str) -> tuple[str, ...]:
    """Every value of the kinds' `STATUSES` or `TYPES` enum, in the kinds' order."""
    import importlib

    values: dict[str, None] = {}
    for kind in SEARCH_KINDS:
        module = importlib.import_module(f"vouch.kinds.{kind}")
        values.update(dict.fromkeys(getattr(module, enum, ())))
    return tuple(values)
