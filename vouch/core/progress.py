"""Progress of long work, handed to whoever asked for it; the core never prints it.

A long operation (a bulk source add, an index build, an eval, an export or import, lint
over every file) takes an optional `progress` callback and calls it as it goes:

    progress("reading", done, total)    # a stage, units done so far, units in all

A new stage ends the one before. The CLI passes a callback that draws a bar on a
terminal (`vouch.cli.progress`, the only user of tqdm); servers, `--json` and the
library pass None, and nothing is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

Progress = Callable[[str, int, int], None]  # (stage, done, total)
T = TypeVar("T")


def each(items: Sequence[T], progress: Progress | None, stage: str, every: int = 1) -> Iterator[T]:
    """The items, reporting `stage` after every `every` of them and after the last."""
    if progress is None:
        yield from items
        return
    total = len(items)
    progress(stage, 0, total)
    for n, item in enumerate(items, 1):
        yield item
        if n % every == 0 or n == total:
            progress(stage, n, total)


def step(progress: Progress | None, stage: str) -> None:
    """Announce a stage that reports no units of its own (one step, under way)."""
    if progress is not None:
        progress(stage, 0, 0)
