"""bench/bench_turns.py's generated corpora read as intended: transcripts with the turn
count asked for, documents with as many chunks as a transcript has turns."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from vouch.core.transcripts import parse
from vouch.index import chunking

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture(scope="module")
def bench_turns() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_turns", BENCH / "bench_turns.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_transcript_parses_to_the_turns_asked_for(bench_turns: ModuleType) -> None:
    text = bench_turns.transcript(7, turns=200)
    assert text == bench_turns.transcript(7, turns=200)  # seeded
    turns = parse(text, "plain").turns
    assert len(turns) == 200
    assert 3 <= len({t.speaker for t in turns}) <= 5
    sessions = [t.session for t in turns]
    assert sessions == sorted(sessions) and 5 <= sessions[-1] <= 10
    times = [t.time for t in turns]
    assert all(times) and times == sorted(times)  # type: ignore[type-var]


def test_document_has_one_chunk_per_turn_of_a_transcript(bench_turns: ModuleType) -> None:
    meta = {"id": "a" * 64, "type": "file", "locator": "notes.md", "media_type": "text/markdown"}
    doc = chunking.source_doc(meta, bench_turns.document(3, chunks=120).encode(), "sources/x")
    assert doc.format == "markdown"
    assert len(doc.chunks) == 120
