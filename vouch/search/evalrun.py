"""`vouch eval`: run a golden set against a knowledge base, for every search mode.

With `--corpus DIR` the knowledge base is a temporary one: a fresh git repository in a
temp directory, every file of DIR registered as a source (its id is the sha256 of its
bytes, which is how golden files name relevant documents), indexed, evaluated, removed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vouch.core.progress import Progress, each
from vouch.errors import UsageError
from vouch.methods.context import CallContext
from vouch.search.engine import SearchRequest, search
from vouch.search.eval import CUTOFF, MODES, evaluate, load_golden

if TYPE_CHECKING:
    from vouch.store.kb import KB

_MODE_NAMES = {
    "fts": "fts",
    "fts-only": "fts",
    "vector": "vector",
    "vec": "vector",
    "vec-only": "vector",
    "hybrid": "hybrid",
}


def build_corpus_kb(corpus: Path, workdir: Path, progress: Progress | None = None) -> Any:
    """A knowledge base in `workdir` holding every file under `corpus` as a source."""
    from vouch import git
    from vouch.store import sources
    from vouch.store.initkb import init_kb
    from vouch.store.kb import KB

    files = sources.files_under(corpus)
    if not files:
        raise UsageError(f"{corpus} holds no files to evaluate on")
    workdir.mkdir(parents=True, exist_ok=True)
    git.init_repo(workdir)  # its own repository, never a commit in an enclosing one
    init_kb(workdir, "vouch-eval")
    kb = KB.open(workdir)
    items = [sources.intake_for_path(kb, p) for p in each(files, progress, "reading", every=50)]
    sources.register_many(kb, items, "vouch-eval", progress)
    return kb


def run(
    ctx: CallContext,
    golden_path: Path,
    *,
    corpus: Path | None = None,
    modes: Sequence[str] = MODES,
    tuning: dict[str, Any] | None = None,
) -> dict[str, Any]:
    golden = load_golden(golden_path)
    chosen = [_MODE_NAMES.get(m, m) for m in modes] or list(MODES)
    for mode in chosen:
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}", hint="fts, vector, hybrid")
    if corpus is None:
        return _evaluate(ctx.kb, golden, chosen, ctx.warm, tuning, ctx.progress)
    with tempfile.TemporaryDirectory(prefix="vouch-eval-") as tmp:
        kb = build_corpus_kb(corpus, Path(tmp) / "kb", ctx.progress)
        report = _evaluate(kb, golden, chosen, {}, tuning, ctx.progress)
        report["corpus"] = str(corpus)
        return report


def _evaluate(
    kb: KB,
    golden: Any,
    modes: Sequence[str],
    warm: dict[str, Any],
    tuning: dict[str, Any] | None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    def ranked(query: str, mode: str) -> list[str]:
        request = SearchRequest(query=query, mode=mode, top=CUTOFF, log=False, **(tuning or {}))
        return [r["id"] for r in search(kb, request, warm=warm, progress=progress)["results"]]

    return evaluate(golden, ranked, modes, progress)
