"""Helpers for the index tests: write knowledge files the way an approval leaves them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import git

from vouch.index import graph
from vouch.kinds import KINDS
from vouch.store.kb import KB, path_for

SOURCE = "a" * 64  # claims only need a well-formed evidence id to be valid files

# The HNSW graph is the optional `hnsw` extra (hnswlib compiles C++ when installed): the
# test install leaves it out, and CI runs these tests after installing it (.ci/run).
needs_hnswlib = pytest.mark.skipif(
    not graph.available(),
    reason="hnswlib is not installed (the `hnsw` extra: pip install -e '.[hnsw]')",
)


def write(kb: KB, kind: str, **fields: Any) -> dict[str, Any]:
    """Create a valid object file in the work tree (not committed)."""
    k = KINDS[kind]
    obj = k.new(**fields)
    path = kb.dir / path_for(k, obj["id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(k.dump(obj), encoding="utf-8")
    return obj


def claim(kb: KB, text: str, **fields: Any) -> dict[str, Any]:
    return write(kb, "claim", text=text, evidence=[SOURCE], **fields)


def commit(kb: KB, message: str = "approve knowledge") -> None:
    git(kb.root, "add", "-A", ".vouch")
    git(kb.root, "commit", "-qm", message)


def ids_of(index: Any, hits: list[Any]) -> list[str]:
    info = index.chunks([h.chunk_id for h in hits])
    return [info[h.chunk_id].id for h in hits if h.chunk_id in info]


def index_dir(kb: KB) -> Path:
    return kb.dir / "index"


def release_knowledge(kb: KB, *more_claims: str) -> KB:
    """Two claims (and `more_claims`) and a release guide page with a Rollback section,
    committed: the small knowledge base the index tests search."""
    claim(kb, "Deploys run from the main branch via GitHub Actions", tags=["ops"])
    claim(kb, "The billing service stores invoices in PostgreSQL", tags=["billing"])
    for text in more_claims:
        claim(kb, text)
    write(
        kb,
        "page",
        title="Release guide",
        body="# Release\n\nCut a tag.\n\n## Rollback\n\nRevert the merge and redeploy.\n",
    )
    commit(kb)
    return kb
