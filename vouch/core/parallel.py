"""A pure, CPU-bound check spread over the machine's cores: worker processes forked
from this one, each given a slice of the items (Linux only: elsewhere fork is unsafe or
absent, and the work runs here, one item after another).

The items and the function reach the workers through the fork itself (nothing but two
indexes is pickled on the way in), so 13k files of a bundle cost no copying; what comes
back is pickled, so it should be small (problem messages, not the data).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

LEAST = 2000  # fewer items than this are not worth a worker's start (~10 ms each)
_WORK: tuple[Callable[[Sequence[Any]], list[Any]], Sequence[Any]] | None = None


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def map_slices(
    fn: Callable[[Sequence[T]], list[R]], items: Sequence[T], *, least: int = LEAST
) -> list[R]:
    """`fn(items)`, computed as `fn(slice)` per slice in forked workers and joined in
    order, when there are at least `least` items and more than one core on Linux. `fn`
    must give the same answer either way: a result per item, independent of the others."""
    workers = min(cores(), 8)
    if len(items) < max(least, 2) or workers < 2 or not sys.platform.startswith("linux"):
        return fn(items)
    global _WORK
    size = -(-len(items) // workers)
    bounds = [(start, min(start + size, len(items))) for start in range(0, len(items), size)]
    _WORK = (fn, items)
    try:
        with multiprocessing.get_context("fork").Pool(len(bounds)) as pool:
            parts = pool.map(_run, bounds, chunksize=1)
    finally:
        _WORK = None
    return [result for part in parts for result in part]


def _run(bounds: tuple[int, int]) -> list[Any]:
    assert _WORK is not None  # set by map_slices before the fork
    fn, items = _WORK
    return fn(items[bounds[0] : bounds[1]])
