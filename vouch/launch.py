"""The `vouch` command's entry point, and what a cold command starts before its imports:
git's freshness check for a read.

A cold `vouch search` spends ~100 ms importing click, the CLI and the index before it
can ask git whether the index is fresh, and git then needs ~40 ms at 10k objects
(~0.3 s at 100k) to stat every tracked file. Started first, git works on the other core
while Python imports, and the search's freshness check takes its answer over
(`vouch.index.freshness.prestart`). Only for commands that read (nothing they do
before the check changes the files), and only for a knowledge base found the plain way:
a `.vouch/` with config.yaml at the top of a git work tree. Anything else starts nothing
and the command checks as it always does. A search or a context pack goes to the
knowledge base's warm process first, when one runs (`vouch warm start`,
`vouch.forward`); when none does, the command, once it has answered, starts one for
the searches after it (`vouch.autostart`). This module imports nothing heavy (the CLI
is imported after `begin`).
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

# A command's imports make tens of thousands of objects that live until it exits; at the
# interpreter's default (a collection per 700 new ones) the cycle collector walks them
# 20-50 times before the command does anything: 7 ms of `--version`, 10 ms of a cold
# search, 15 ms of a hybrid one here. One per 50,000 keeps a long command's garbage
# bounded and collects nothing in a short one (`python bench/bench_search.py`).
GC_THRESHOLD = 50_000

# reads that check the index's freshness: `show PROPOSAL` searches for look-alikes
READS = frozenset({"search", "context", "show"})


def run() -> int:
    """`vouch` on the command line (the console script and `python -m vouch`)."""
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    argv = sys.argv[1:]
    answered, unserved = _begin(argv)
    if answered is not None:
        return answered
    from vouch.cli import main

    code = main()
    if unserved is not None:
        from vouch import autostart

        autostart.after(argv, unserved, code)
    return code


def begin(argv: list[str]) -> int | None:
    """For a read of a plain knowledge base: the exit status when its warm process
    answered the command (`vouch.forward`), else None after starting git's freshness
    check for this process's own run."""
    return _begin(argv)[0]


def _begin(argv: list[str]) -> tuple[int | None, Path | None]:
    """`begin`, and the knowledge base of a command that could have been forwarded but
    no warm process answered (None otherwise)."""
    from vouch import forward

    command = forward.command_of(argv)
    if forward.across(argv):
        return None, None  # other knowledge bases: nothing of this one to start or check
    try:
        found = _knowledge_base(argv) if command in READS else None
    except OSError:
        return None, None
    if found is None:
        return None, None
    unserved = None
    if forward.forwardable(command, argv):
        answered = forward.forward(argv, found)
        if answered is not None:
            return answered, None
        unserved = found
    from vouch.index.freshness import prestart

    prestart(found.parent, found.name)
    return None, unserved


def _knowledge_base(argv: list[str]) -> Path | None:
    """The `.vouch/` directory the command will use (`find_root`), when it sits beside
    `.git`."""
    from vouch.errors import NoKnowledgeBase
    from vouch.store.root import find_root

    explicit = None
    for i, arg in enumerate(argv):
        if arg == "--kb" and i + 1 < len(argv):
            explicit = argv[i + 1]
        elif arg.startswith("--kb="):
            explicit = arg[5:]
    try:
        found = find_root(None, explicit)
    except NoKnowledgeBase:
        return None
    return found if (found.parent / ".git").exists() else None
