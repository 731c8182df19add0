"""Transcripts read turn by turn (issue 19): formats, malformed lines, turn citations,
turn-level search with speaker/time filters and context that stays in its session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouch.core import transcripts
from vouch.core.transcripts import TranscriptError
from vouch.errors import ValidationFailed
from vouch.index import chunking
from vouch.kinds import KINDS
from vouch.search.engine import SearchRequest, search
from vouch.store import evidence, sources
from vouch.store.kb import KB

CHAT = """# Session 1 — 1:56 pm on 8 May, 2023
Ann: I finally adopted a greyhound from the shelter.
Bob: Congratulations! What is the dog called?
Ann: Her name is Pepper, she loves long walks.
  She sleeps most of the day too.
Bob: Pepper is a lovely name.

# Session 2 — 20 June, 2023
[09:15] Bob: I started learning the cello last week.
Ann: Which teacher did you pick?
Bob: A retired orchestra player from the conservatory.
"""


def claude_lines() -> str:
    rows = [
        {"type": "summary", "summary": "fixing the parser"},
        {
            "type": "user",
            "sessionId": "s1",
            "timestamp": "2025-06-01T10:00:00Z",
            "message": {"role": "user", "content": "The locator parser rejects T12."},
        },
        {
            "type": "assistant",
            "sessionId": "s1",
            "timestamp": "2025-06-01T10:00:05Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "text", "text": "I will read evidence.py first."},
                    {"type": "tool_use", "name": "Read", "input": {"path": "x"}},
                ],
            },
        },
        {
            "type": "user",
            "sessionId": "s1",
            "message": {"role": "user", "content": [{"type": "tool_result", "content": "..."}]},
        },
        {"type": "user", "isMeta": True, "message": {"role": "user", "content": "<caveat>"}},
    ]
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def test_plain_log_turns_speakers_times_sessions() -> None:
    found = transcripts.parse(CHAT)
    assert found.format == "plain" and transcripts.detect(CHAT) == "plain"
    assert [t.speaker for t in found.turns] == ["Ann", "Bob", "Ann", "Bob", "Bob", "Ann", "Bob"]
    assert found.turns[2].text.endswith("She sleeps most of the day too.")  # continuation
    assert (found.turns[2].line, found.turns[2].end_line) == (4, 5)
    assert found.turns[0].time == "2023-05-08T13:56"  # the session's date
    assert found.turns[4].time == "2023-06-20T09:15"  # its own clock on the session's day
    assert found.turns[5].time == "2023-06-20" and found.turns[5].session == 2


def test_json_lines_and_claude_code_sessions() -> None:
    chat = "\n".join(
        json.dumps(r)
        for r in [
            {"role": "user", "content": "hi", "timestamp": 1717236000},
            {"speaker": "bot", "text": [{"type": "text", "text": "hello"}]},
        ]
    )
    found = transcripts.parse(chat)
    assert found.format == "jsonl"
    assert [(t.speaker, t.text) for t in found.turns] == [("user", "hi"), ("bot", "hello")]
    assert found.turns[0].time == "2024-06-01T10:00"
    code = transcripts.parse(claude_lines())
    assert code.format == "claude-code"
    # tool calls, tool results, thinking, summaries and meta lines are not turns
    assert [(t.speaker, t.text) for t in code.turns] == [
        ("user", "The locator parser rejects T12."),
        ("assistant", "I will read evidence.py first."),
    ]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"role": "user", "content": "hi"}\n{"role": "user", "content": "x"\n', 2),
        ('{"role": "user", "content": "hi"}\n\n{"content": "who said it?"}\n', 3),
        ("just a paragraph of prose\nAnn: hi\n", 1),
    ],
)
def test_malformed_lines_are_named_and_nothing_is_registered(kb: KB, text: str, line: int) -> None:
    with pytest.raises(TranscriptError) as err:
        transcripts.parse_content(text.encode())
    assert err.value.line == line
    head = kb.repo.resolve("HEAD")
    item = sources.Intake(text.encode(), "transcript", "bad.jsonl", None, "text/plain")
    with pytest.raises(ValidationFailed, match=f"bad.jsonl: line {line}:"):
        sources.register_many(
            kb, [sources.Intake(CHAT.encode(), "transcript", "ok.txt"), item], "t"
        )
    assert kb.repo.resolve("HEAD") == head  # not even the good one of the two


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["user", "assistant", "x"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "role", "content", "text", "message", "timestamp", "session"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_JSON, min_size=1, max_size=4), st.sampled_from(["user", "assistant", None]))
def test_any_json_lines_read_as_turns_or_a_named_error(lines: list[object], kind: object) -> None:
    """A hand-made or hostile chat log (a list where a type belongs, an object where text
    does) is read as turns or refused with the line that is wrong: never a crash."""
    rows = [
        {"type": kind, "message": line} if kind and isinstance(line, dict) else line
        for line in lines
    ]
    data = "\n".join(json.dumps(row) for row in rows).encode()
    for read in (transcripts.parse_content, chunking.transcript_pieces):
        try:
            read(data)
        except TranscriptError as exc:
            assert 1 <= exc.line <= len(rows)
    assert transcripts.parse_content(b'{"type": ["user"], "speaker": "a", "text": "hi"}')


def test_detection_is_conservative() -> None:
    assert transcripts.detect("name: vouch\nversion: 1\nlicense: MIT\nauthor: me\n") is None
    assert transcripts.detect("# Notes\n\nSome prose.\nNote: more prose.\n") is None
    assert transcripts.detect('{"a": 1}\n{"b": 2}\n') is None


@pytest.fixture
def chat_kb(kb: KB) -> tuple[KB, str]:
    (kb.root / "chat.txt").write_text(CHAT)
    (kb.root / "agent.jsonl").write_text(claude_lines())
    sid = sources.register_source_from_path(kb, "t", "chat.txt")["id"]
    other = sources.register_source_from_path(kb, "t", "agent.jsonl")["id"]
    assert kb.read(KINDS["source"], other)["type"] == "transcript"  # detected by content
    return kb, sid


def test_turn_evidence_and_show(chat_kb: tuple[KB, str], run_cli) -> None:
    kb, sid = chat_kb
    meta = kb.read(KINDS["source"], sid)
    assert meta["type"] == "transcript"
    assert meta["metadata"]["transcript"]["turns"] == 7
    made = evidence.register_evidence(kb, "t", sid, "T2-T3", quote="Her name is Pepper")
    assert made["deduplicated"] is False
    obj, errors = evidence.make(sid, "T8", None, kb.source_content(sid))
    assert obj is None and "outside the transcript (7 turns)" in errors[0]
    obj, errors = evidence.make(sid, "T1", "cello", kb.source_content(sid))
    assert obj is None and "does not appear" in errors[0]
    shown = run_cli("show", sid, "--turns", "T3-T5", "--json", cwd=kb.root).json()
    assert [t["turn"] for t in shown["items"]] == [3, 4, 5]
    text = run_cli("show", sid, "--turns", "4-5", cwd=kb.root).out
    assert "T4 2023-05-08T13:56 Bob: Pepper is a lovely name." in text
    assert "\n\nT5 2023-06-20T09:15 Bob:" in text  # a blank line between sessions
    assert run_cli("show", sid, "--turns", "9", cwd=kb.root).code == 1


def test_turn_hits_filters_and_context_within_session(chat_kb: tuple[KB, str]) -> None:
    kb, sid = chat_kb

    def hits(query: str, **kw: object) -> list[dict]:
        req = SearchRequest(query, kinds=("source",), log=False, **kw)  # type: ignore[arg-type]
        return search(kb, req)["results"]

    top = hits("cello lessons", mode="fts")[0]
    assert top["cite"] == f"{sid}:T5"
    assert top["source"]["turn"] == 5 and top["source"]["speaker"] == "Bob"
    assert top["source"]["time"] == "2023-06-20T09:15"
    # turn 4 ends session 1: its context is turn 6 only, never across the boundary
    assert [c["turn"] for c in top["context"]] == [6]
    assert all(h["source"].get("speaker") == "Ann" for h in hits("Pepper", speakers=("ann",)))
    assert {h["source"]["turn"] for h in hits("Pepper greyhound cello", mode="fts")} >= {1, 3, 5}
    late = hits("Pepper greyhound cello", mode="fts", since="2023-06")
    assert late and all(h["source"]["time"] >= "2023-06" for h in late)
    early = hits("Pepper greyhound cello", mode="fts", until="2023-05-08")
    assert early and all(h["source"]["session"] == 1 for h in early)
    with pytest.raises(Exception, match="not an ISO date"):
        hits("Pepper", since="last week")


def test_turns_and_documents_are_fused_with_their_own_shares(chat_kb: tuple[KB, str]) -> None:
    """A transcript turn takes the `turn_*` shares, a document the others, in one search:
    with BM25 alone for turns and vectors alone for documents, no turn has a vector part
    and no document a BM25 part; the trace shows both sets of weights."""
    kb, _ = chat_kb
    (kb.root / "dogs.md").write_text(
        "# Greyhounds\n\nA retired greyhound sleeps most of the day.\n"
    )
    sources.register_source_from_path(kb, "t", "dogs.md")
    config = kb.dir / "config.yaml"
    shares = "".join(
        f"  {name}: {value}\n"
        for name, value in (
            ("fts_share_full", 0.0),
            ("fts_share", 0.0),
            ("fts_share_uncovered", 0.0),
            ("turn_fts_share_full", 1.0),
            ("turn_fts_share", 1.0),
            ("turn_fts_share_uncovered", 1.0),
            ("similarity_floor", 0.0),
        )
    )
    assert "\nsearch:\n" in config.read_text()
    config.write_text(config.read_text().replace("search:\n", "search:\n" + shares))
    kb = KB.open(kb.root)  # reads the configuration anew
    found = search(kb, SearchRequest("greyhound sleeps all day", log=False, trace=True, top=20))
    turns = [r for r in found["results"] if r["source"].get("turn")]
    documents = [r for r in found["results"] if not r["source"].get("turn")]
    assert turns and documents
    assert all(r["score_breakdown"]["vector"] == 0.0 for r in turns)
    assert all(r["score_breakdown"]["fts"] == 0.0 for r in documents)
    assert found["trace"]["weights"] == {"fts": 0.0, "vector": 1.0}
    assert found["trace"]["turn_weights"] == {"fts": 1.0, "vector": 0.0}


def test_transcripts_are_found_by_the_whole_path(chat_kb: tuple[KB, str], run_cli) -> None:
    kb, sid = chat_kb
    res = run_cli("search", "orchestra teacher", "--speaker", "Bob", "--json", cwd=kb.root)
    found = res.json()
    hits = found["results"] if isinstance(found, dict) else found
    assert hits and hits[0]["cite"] == f"{sid}:T7"
    assert Path(kb.root / "chat.txt").is_file()


def test_a_session_keeps_its_transcript_and_the_reviewer_sees_the_exchange(
    chat_kb: tuple[KB, str], run_cli
) -> None:
    """Issue 19.3: a session attaches its transcript; a proposal made in it cites a turn;
    the review screen shows the exact exchange (the turns' lines), and a source that is
    not a transcript is refused, writing nothing."""
    from vouch.methods import registry as ops
    from vouch.methods.context import CallContext

    kb, sid = chat_kb
    agent = CallContext(kb_path=str(kb.root), agent="agent")
    session = ops.invoke(agent, "kb.session_start", {"task": "pets"})["session_id"]
    made = ops.invoke(
        agent,
        "kb.propose_claim",
        {"text": "Ann's greyhound is called Pepper.", "evidence": [f"{sid}:T3"],
         "session_id": session},
    )  # fmt: skip
    assert made["valid"], made
    (kb.root / "notes.md").write_text("# Notes\n\nnot a chat\n")
    plain = sources.register_source_from_path(kb, "t", "notes.md")["id"]
    head = kb.repo.resolve("HEAD")
    refused = run_cli("session", "end", session, "--transcript", plain, "--json", cwd=kb.root)
    assert refused.code == 1 and "not a transcript" in refused.json()["error"]["message"]
    assert kb.repo.resolve("HEAD") == head
    ended = run_cli("session", "end", session, "--transcript", sid[:12], "--json", cwd=kb.root)
    assert ended.code == 0, ended.err
    assert ended.json()["transcript"] == sid  # a prefix resolves to the whole id
    assert kb.read(KINDS["session"], session)["transcript"] == sid
    screen = ops.invoke(agent, "kb.read_proposal", {"id": made["proposal_id"]})
    (cited,) = screen["citations"]
    assert cited["locator"] == "T3" and not cited.get("problem"), cited
    shown = "\n".join(row["text"] for row in cited["excerpt"] if row.get("cited"))
    assert "Her name is Pepper" in shown and "She sleeps most of the day too." in shown
    assert "Congratulations" not in shown  # T2 is context, not the cited exchange


def test_a_context_pack_carries_the_cited_turns_with_their_neighbours(
    chat_kb: tuple[KB, str],
) -> None:
    from vouch.methods import registry as ops
    from vouch.methods.context import CallContext

    kb, sid = chat_kb
    agent = CallContext(kb_path=str(kb.root), agent="agent")
    reviewer = CallContext(kb_path=str(kb.root), agent="Reviewer")
    for text, turn in (("Ann's greyhound is called Pepper.", "T3"), ("Bob plays cello.", "T5")):
        made = ops.invoke(agent, "kb.propose_claim", {"text": text, "evidence": [f"{sid}:{turn}"]})
        ops.invoke(reviewer, "kb.read_proposal", {"id": made["proposal_id"]})  # shown: pinned
        ops.invoke(reviewer, "kb.approve", {"proposal_id": made["proposal_id"]})
    pack = ops.invoke(agent, "kb.context", {"task": "greyhound called Pepper"})
    by_text = {i["text"]: i for i in pack["items"] if i["kind"] == "claim"}
    (pepper,) = by_text["Ann's greyhound is called Pepper."]["citations"]
    assert [(t["turn"], t["cited"]) for t in pepper["turns"]] == [(2, False), (3, True), (4, False)]
    assert pepper["turns"][1]["speaker"] == "Ann" and "Pepper" in pepper["turns"][1]["text"]
    pack = ops.invoke(agent, "kb.context", {"task": "Bob plays cello"})
    by_text = {i["text"]: i for i in pack["items"] if i["kind"] == "claim"}
    (cello,) = by_text["Bob plays cello."]["citations"]
    assert [t["turn"] for t in cello["turns"]] == [5, 6]  # T4 is another session


def test_jsonl_sessions_bound_context_and_until_takes_in_its_whole_minute(kb: KB) -> None:
    """A changed `session` in a JSON Lines log starts a new session: a hit's context
    never reaches into the other one. `until` with minutes keeps that whole minute
    (09:15:40 is within 09:15) and nothing after it; a turn matches through its
    context too."""
    rows = [
        ("a", "alice", "Kept the rotation runbook in the wiki.", "2024-03-01T09:14:05Z"),
        ("a", "bob", "The pager escalation goes to Dana after midnight.", "2024-03-01T09:15:40Z"),
        ("b", "alice", "Moved the escalation policy into terraform.", "2024-03-01T09:16:02Z"),
        ("b", "bob", "Terraform plans run in CI now.", "2024-03-01T09:17:00Z"),
    ]
    text = "\n".join(
        json.dumps({"session": s, "speaker": who, "text": said, "timestamp": when})
        for s, who, said, when in rows
    )
    (kb.root / "ops.jsonl").write_text(text + "\n")
    sid = sources.register_source_from_path(kb, "t", "ops.jsonl")["id"]

    def hits(query: str, **kw: object) -> list[dict]:
        req = SearchRequest(query, kinds=("source",), mode="fts", log=False, **kw)  # type: ignore[arg-type]
        return [h for h in search(kb, req)["results"] if h["id"] == sid]

    pager = hits("pager escalation Dana")[0]
    assert pager["source"]["turn"] == 2 and pager["source"]["session"] == 1
    assert [c["turn"] for c in pager["context"]] == [1]  # turn 3 is session 2
    policy = hits("escalation policy terraform")[0]
    assert policy["source"]["turn"] == 3 and [c["turn"] for c in policy["context"]] == [4]
    # turn 1 matches through its context (turn 2), turn 4 through turn 3
    turns = {h["source"]["turn"] for h in hits("escalation", until="2024-03-01T09:15")}
    assert turns == {1, 2}
    turns = {h["source"]["turn"] for h in hits("escalation", until="2024-03-01T09:16")}
    assert turns == {1, 2, 3}
    assert {h["source"]["turn"] for h in hits("escalation")} == {1, 2, 3, 4}


def test_speaker_and_time_filters_use_an_index(chat_kb: tuple[KB, str]) -> None:
    """The filtered vector search selects its rows in SQL: `--speaker` and `--since`
    read an index (lower(speaker), time), not every chunk (a full scan cost 56 ms at
    100k turns)."""
    from vouch.index import Index
    from vouch.index.filters import Filters

    kb, _ = chat_kb
    index = Index.open(kb)
    try:
        for f in (Filters.of(speakers=["ann"]), Filters.of(since="2023-06")):
            where, params = f.sql("c")
            plan = index.conn.execute(
                "EXPLAIN QUERY PLAN SELECT c.vec_row FROM chunks c "
                f"WHERE c.vec_row IS NOT NULL AND {where}",
                params,
            ).fetchall()
            detail = " ".join(str(row[-1]) for row in plan)
            assert "chunks_speaker" in detail or "chunks_time" in detail, detail
    finally:
        index.close()
