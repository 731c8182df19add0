"""Progress bars on a terminal: the CLI's side of `vouch.core.progress`; the only user of tqdm.

`reporter(format)` is the callback a command hands to long work (`CallContext.progress`):
a tqdm bar on stderr, one stage at a time, when stderr is a terminal and the output is
not JSON; None otherwise — a pipe, a file, `--json`, and the servers, which never ask.
A bar is erased when its stage ends and before anything is printed (`end`), so what
stays on the screen is the command's output. tqdm loads with the first bar drawn: a
command that reports nothing does not pay for it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from vouch.core.progress import Progress

_drawn: dict[str, Any] = {}  # "stage" -> name, "bar" -> the tqdm bar on the screen now


def on_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced by an object without it, or closed
        return False


def reporter(output_format: str) -> Progress | None:
    """The progress callback for a command printing in `output_format`, or None."""
    if output_format == "json" or not on_terminal():
        return None
    return _draw


def _draw(stage: str, done: int, total: int) -> None:
    bar = _drawn.get("bar")
    if bar is None or _drawn.get("stage") != stage:
        end()
        from tqdm import tqdm

        width = _width()
        bar = tqdm(
            desc=stage.capitalize(),
            total=total or None,
            file=sys.stderr,
            leave=False,
            dynamic_ncols=width is None,
            ncols=width,
            # one bar at a time; tqdm hides every bar on a terminal reporting 0 rows
            nrows=24,
            # a stage without units (`progress.step`): its name and the time it has taken
            bar_format=None if total else "{desc}... {elapsed}",
        )
        _drawn.update(stage=stage, bar=bar)
    if total and done != bar.n:
        bar.update(done - bar.n)


def _width() -> int | None:
    """None to follow the terminal's width; 80 for one that reports none (a bare
    pseudo-terminal, as `script` or a CI runner makes)."""
    try:
        return None if os.get_terminal_size(sys.stderr.fileno()).columns > 0 else 80
    except (AttributeError, OSError, ValueError):
        return 80


def end() -> None:
    """Erase the bar on the screen, if any: its stage is over or output follows."""
    bar = _drawn.pop("bar", None)
    _drawn.pop("stage", None)
    if bar is not None:
        bar.close()
