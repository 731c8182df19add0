"""One safe reader (issue 34, finding 2): YAML anchors and aliases, deep nesting and
oversize files in knowledge, in proposal branches, in transcripts and in the audit log
are a clear error naming the file (E201, exit 2) within a second — never a hang, a
RecursionError (E200) or a crash of libyaml's recursive composer.

Every attack is built in a real repository (committed files, proposal branches made
with git plumbing, a real `vouch serve` over JSONL) and run through the real commands.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import git
from gate_support import BOB, a_source, call, propose_claim, proposed
from hypothesis import given, settings
from hypothesis import strategies as st
from servers_support import JsonlServer

from vouch.core import fastyaml, safeload, transcripts, yamlio
from vouch.errors import CorruptFile
from vouch.kinds import claim
from vouch.store import audit
from vouch.store.kb import KB, PROPOSAL_PREFIX


def _bomb() -> str:
    """Nine levels of nine aliases: under 700 bytes, 9**9 values when expanded."""
    lines = ['x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"x{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


def _deep_block(levels: int) -> str:
    """`levels` block mappings, each indented one column more than its parent."""
    return "".join(" " * i + "k:\n" for i in range(levels)) + " " * levels + "k: 1\n"


# what each hostile claim file holds instead of (or beside) what vouch wrote
HOSTILE: dict[str, Callable[[str], str]] = {
    "billion laughs": lambda text: text + _bomb(),
    "recursive alias": lambda text: text.replace("confidence: 0.7\n", "confidence: &x [*x]\n"),
    "flow nesting 10k": lambda text: text + "x: " + "[" * 10_000 + "]" * 10_000 + "\n",
    "flow mappings 10k": lambda text: text + "x: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n",
    "compact block sequences 10k": lambda text: text + "x:\n" + "- " * 10_000 + "a\n",
    "block mappings 1k": lambda text: text + _deep_block(1_000),
    "oversize": lambda text: text + "x: '" + "a" * (safeload.MAX_YAML_CHARS + 1) + "'\n",
}
WHAT = {
    "billion laughs": "a YAML anchor (&a0)",
    "recursive alias": "a YAML anchor (&x)",
    "oversize": "more than vouch reads",
}


def _what(name: str) -> str:
    return WHAT.get(name, f"nested more than {safeload.MAX_DEPTH} deep")


def _approved(kb: KB, text: str = "Deploys need a green CI run") -> tuple[str, Path]:
    pid = propose_claim(kb, text)
    call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    cid = claim.KIND.make_id({"text": text})
    return cid, kb.dir / claim.path_for(cid)


@contextlib.contextmanager
def _within(seconds: float) -> Iterator[None]:
    """Fail (TimeoutError) instead of hanging when the guard under test is missing: a
    billion laughs expands in Python code, which a signal interrupts."""

    def expired(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _quick(run_cli, *args: str, cwd: Path, limit: float = 2.0, caplog=None):
    """Run a command in-process, checking it answered within `limit` seconds without an
    internal error; its warnings (logged) are appended to `res.err`."""
    if caplog is not None:
        caplog.clear()
    start = time.perf_counter()
    with _within(limit * 5):
        res = run_cli(*args, cwd=cwd)
    elapsed = time.perf_counter() - start
    assert elapsed < limit, (args, elapsed)
    if caplog is not None:
        res.err += caplog.text
    assert "Traceback" not in res.err and "E200" not in res.err + res.out, res.err
    return res


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_claim_in_the_knowledge_base_is_named_at_once(
    kb_with_sources: KB, run_cli, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    kb = kb_with_sources
    cid, path = _approved(kb)
    assert run_cli("search", "deploys", "--fts-only", cwd=kb.root).code == 0  # index built
    path.write_text(HOSTILE[name](path.read_text()))
    git(kb.root, "commit", "-qam", f"hand edit: {name}")
    rel = f".vouch/{claim.path_for(cid)}"
    what = _what(name)

    res = _quick(run_cli, "lint", cwd=kb.root)
    assert res.code == 1 and rel in res.out and what in res.out, res.out
    res = _quick(run_cli, "doctor", cwd=kb.root, limit=2.0)  # also verifies sources
    assert res.code == 1 and what in res.out, res.out
    res = _quick(run_cli, "list", "claims", cwd=kb.root, caplog=caplog)
    assert res.code == 0 and f"not listed: {rel}" in res.err and what in res.err, res.err
    res = _quick(run_cli, "show", cid, cwd=kb.root)
    assert res.code == 2 and "error[E201]" in res.err and rel in res.err and what in res.err
    res = _quick(run_cli, "search", "deploys", "--fts-only", "--json", cwd=kb.root, caplog=caplog)
    assert res.code == 0 and f"not indexed: {rel}" in res.err and what in res.err, res.err
    found = json.dumps(res.json()["results"])
    assert cid not in found  # the file is not searchable while it is unreadable
    if name in ("billion laughs", "recursive alias"):  # the anchor's line is named
        hostile = path.read_text()
        line = hostile[: hostile.index("&")].count("\n") + 1
        assert set(re.findall(r"\.yaml line (\d+):", res.err)) == {str(line)}, res.err


def test_a_recursive_alias_over_jsonl_is_a_named_error(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    cid, path = _approved(kb)
    path.write_text(HOSTILE["recursive alias"](path.read_text()))
    git(kb.root, "commit", "-qam", "confidence: &x [*x]")
    with JsonlServer(kb.root) as server:
        for method, params in [
            ("kb.search", {"query": "deploys", "mode": "fts"}),
            ("kb.search", {"query": "deploys"}),
            ("kb.read_claim", {"id": cid}),
        ]:
            start = time.perf_counter()
            response = server.call(method, params)
            assert time.perf_counter() - start < 5
            # a system error keeps JSONL's `internal_error` beside its own vouch code
            text = json.dumps(response)
            assert "E200" not in text and "Recursion" not in text, response
            if method == "kb.read_claim":
                assert response["ok"] is False and response["error"]["vouch_code"] == "E201"
                assert "a YAML anchor (&x)" in response["error"]["message"]
            else:
                assert response["ok"] is True, response
                assert cid not in json.dumps(response["result"])
        assert server.close() == 0
        assert "Traceback" not in server.stderr(), server.stderr()


def _proposal_with(kb: KB, pid: str, path: str, data: bytes) -> str:
    """Rewrite the proposal's commit with `path` holding `data` (same parent, message)."""
    ref = PROPOSAL_PREFIX + pid
    env = {**os.environ, "GIT_INDEX_FILE": str(kb.root / ".git" / "forge.index")}

    def plumb(*args: str, data: bytes | None = None) -> str:
        out = subprocess.run(
            ["git", *args], cwd=kb.root, env=env, input=data, check=True, capture_output=True
        )
        return out.stdout.decode().strip()

    plumb("read-tree", ref)
    blob = plumb("hash-object", "-w", "--stdin", data=data)
    plumb("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = plumb("write-tree")
    (kb.root / ".git" / "forge.index").unlink()
    message = plumb("log", "-1", "--format=%B", ref)
    old = plumb("rev-parse", ref)
    # the same author as vouch's commit (the proposer): only the file is forged
    name, email = plumb("log", "-1", "--format=%an%x00%ae", ref).split("\0")
    env.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email)
    new = plumb("commit-tree", tree, "-p", plumb("rev-parse", f"{ref}^"), "-m", message)
    plumb("update-ref", ref, new, old)
    return new


def _state(kb: KB) -> tuple[str, ...]:
    return (
        git(kb.root, "for-each-ref", "--format=%(refname) %(objectname)"),
        git(kb.root, "ls-files", "-s"),
        git(kb.root, "status", "--porcelain", "--untracked-files=all"),
        (kb.dir / audit.LOG_NAME).read_text(),
    )


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_proposal_is_refused_at_once(kb_with_sources: KB, run_cli, name: str) -> None:
    kb = kb_with_sources
    text = "Hostile proposals are refused"
    pid = propose_claim(kb, text, shown=False)  # nobody has reviewed it yet
    rel = f".vouch/{claim.path_for(claim.KIND.make_id({'text': text}))}"
    original = git(kb.root, "show", f"{PROPOSAL_PREFIX}{pid}:{rel}") + "\n"
    forged = _proposal_with(kb, pid, rel, HOSTILE[name](original).encode())
    before = _state(kb)
    what = _what(name)

    res = _quick(run_cli, "show", pid, "--json", cwd=kb.root)
    assert res.code == 0, res.err  # the reviewer sees the bytes and why they are refused
    problems = " ".join(res.json()["problems"])
    assert rel in problems and what in problems, problems
    res = _quick(run_cli, "show", pid, cwd=kb.root)  # the human screen says so too
    assert res.code == 0 and "Approve would refuse it:" in res.out and what in res.out
    assert "--expect" not in res.out
    assert not git(kb.root, "for-each-ref", "refs/vouch/reviewed/")  # nothing pinned
    # pinned to the forged commit: the refusal is the file's, not the missing pin's
    res = _quick(run_cli, "approve", pid, "--expect", forged, cwd=kb.root)
    assert res.code == 1 and "error[E104]" in res.err, res.err
    assert rel in res.err and what in res.err, res.err
    res = _quick(run_cli, "pending", cwd=kb.root)
    assert res.code == 0
    assert _state(kb) == before


# -- JSON lines ---------------------------------------------------------------------------
DEEP_LINES = {
    "lists": "[" * 100_000 + "]" * 100_000,
    "objects": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "just past the limit": '{"role": "user", "content": '
    + "[" * safeload.MAX_DEPTH
    + "]" * safeload.MAX_DEPTH
    + "}",
}


@pytest.mark.parametrize("shape", list(DEEP_LINES))
def test_a_deeply_nested_transcript_line_is_a_named_error(
    kb: KB, run_cli, tmp_path: Path, shape: str
) -> None:
    chat = '{"role": "user", "content": "hello"}\n' + DEEP_LINES[shape] + "\n"
    with pytest.raises(transcripts.TranscriptError, match="nested more than") as err:
        transcripts.parse_content(chat.encode())
    assert err.value.line == 2
    (kb.root / "chat.jsonl").write_text(chat)
    head = git(kb.root, "rev-parse", "HEAD")
    res = _quick(run_cli, "source", "add", "chat.jsonl", "--type", "transcript", cwd=kb.root)
    assert res.code == 1 and "line 2" in res.err and "nested more than" in res.err, res.err
    assert git(kb.root, "rev-parse", "HEAD") == head  # nothing registered
    # undeclared, it is not detected as a transcript: a plain file, turns never read
    res = _quick(run_cli, "source", "add", "chat.jsonl", "--json", cwd=kb.root)
    assert res.code == 0 and "transcript" not in json.dumps(res.json()), res.out
    res = _quick(run_cli, "search", "hello", "--fts-only", cwd=kb.root, limit=20)
    assert res.code == 0
    # first, the deep line is what format detection reads
    first = DEEP_LINES[shape] + '\n{"role": "user", "content": "hello"}\n'
    assert transcripts.detect(first) is None
    with pytest.raises(transcripts.TranscriptError) as err:
        transcripts.parse_content(first.encode())  # an object first: JSON lines claimed
    assert err.value.line == 1 and ("nested more than" in str(err.value)) == (first[0] == "{")
    (kb.root / "first.jsonl").write_text(first)
    res = _quick(run_cli, "source", "add", "first.jsonl", cwd=kb.root)
    assert res.code == 0, res.err


def test_a_deep_transcript_line_over_jsonl_is_a_named_error(kb: KB) -> None:
    (kb.root / "chat.jsonl").write_text(
        '{"role": "user", "content": "hello"}\n' + DEEP_LINES["lists"] + "\n"
    )
    head = git(kb.root, "rev-parse", "HEAD")
    with JsonlServer(kb.root, env={"VOUCH_AGENT": "bot"}) as server:
        response = server.call(
            "kb.register_source",
            {
                "content": (kb.root / "chat.jsonl").read_text(),
                "type": "transcript",
                "locator": "chat.jsonl",
            },
        )
        assert response["ok"] is False, response
        assert "internal_error" not in json.dumps(response)
        assert "nested more than" in response["error"]["message"]
        assert server.close() == 0
    assert git(kb.root, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("shape", ["lists", "objects"])
def test_a_deep_audit_line_is_reported_not_a_crash(
    kb_with_sources: KB, run_cli, shape: str
) -> None:
    kb = kb_with_sources
    log = kb.dir / audit.LOG_NAME
    lines = log.read_text().splitlines()
    log.write_text("\n".join([*lines, DEEP_LINES[shape]]) + "\n")
    git(kb.root, "commit", "-qam", "a deep audit line")
    res = _quick(run_cli, "audit-verify", cwd=kb.root)
    assert res.code == 1 and "nested more than" in res.out + res.err, (res.out, res.err)
    assert f"{audit.LOG_NAME}:{len(lines) + 1}: values nested more than" in res.out
    res = _quick(run_cli, "audit", cwd=kb.root)
    assert res.code == 0
    res = _quick(run_cli, "doctor", cwd=kb.root, limit=3.0)
    assert res.code == 1
    res = _quick(run_cli, "lint", "--since", "HEAD~1", cwd=kb.root)
    assert res.code in (0, 1)


def test_a_deep_search_cursor_and_params_are_usage_errors(kb_with_sources: KB, run_cli) -> None:
    import base64

    kb = kb_with_sources
    token = base64.urlsafe_b64encode(DEEP_LINES["lists"].encode()).decode()
    res = _quick(
        run_cli, "search", "deploys", "--fts-only", "--cursor", token, cwd=kb.root, limit=5
    )
    assert res.code == 1 and "not a valid search cursor" in res.err
    res = _quick(run_cli, "call", "kb.status", DEEP_LINES["objects"], cwd=kb.root)
    assert res.code == 1 and "error[E100]" in res.err and "nested more than" in res.err


# -- the reader itself ----------------------------------------------------------------------
@pytest.mark.parametrize("name", list(HOSTILE))
def test_every_yaml_reader_refuses_within_a_second(name: str) -> None:
    text = HOSTILE[name](claim.dump(claim.new(text="t", evidence=["a" * 64])))
    page = "---\n" + text + "---\n\nbody\n"
    for read in (
        lambda: fastyaml.load(text, where="f.yaml"),
        lambda: yamlio.load_yaml(text, where="f.yaml"),
        lambda: fastyaml.load_page(page, where="f.md"),
        lambda: yamlio.load_markdown(page, where="f.md"),
        lambda: claim.KIND.load(text, where="f.yaml"),
    ):
        start = time.perf_counter()
        with _within(5), pytest.raises(CorruptFile, match=r"f\.(yaml|md)") as err:
            read()
        assert time.perf_counter() - start < 1
        assert _what(name) in str(err.value)
        assert err.value.code == "E201" and err.value.exit_code == 2


def test_an_oversize_page_is_refused_before_parsing() -> None:
    page = "---\ntitle: t\n---\n\n" + "word " * (safeload.MAX_PAGE_CHARS // 5 + 1)
    for read in (fastyaml.load_page, yamlio.load_markdown):
        with pytest.raises(CorruptFile, match="more than vouch reads in a page"):
            read(page, where="p.md")


def test_what_vouch_writes_is_read_as_before() -> None:
    """Text that merely looks like the refused forms stays readable."""
    text = (
        "text: 'R&D costs *more*: see a*b & c'\n"
        'note: "*not an alias* &not an anchor"\n'
        "tags: [a, b, c]\n"
        "deep:\n  a:\n    b:\n      c:\n        - d\n"
        "body: |\n  - * &x [*x] {\n    quoted block text keeps its * and &\n"
    )
    loaded = yamlio.load_yaml(text, where="t")
    assert loaded["text"] == "R&D costs *more*: see a*b & c"
    assert loaded["deep"] == {"a": {"b": {"c": ["d"]}}}
    assert loaded["body"].startswith("- * &x [*x] {")
    nested = "x: " + "[" * (safeload.MAX_DEPTH - 1) + "]" * (safeload.MAX_DEPTH - 1) + "\n"
    assert yamlio.load_yaml(nested, where="t")  # at the limit
    assert yamlio.load_yaml(_deep_block(safeload.MAX_DEPTH - 1), where="t")


# -- property: the byte check never lets through what the scan would refuse ---------------
_NAME = st.sampled_from(["a", "b", "x1"])
_SCALAR = st.sampled_from(["1", "lol", "'q'", '"d"', "R&D", "a*b", "~"])


def _node(depth: int) -> st.SearchStrategy[str]:
    leaf = _SCALAR | _NAME.map(lambda n: f"*{n}") | _NAME.map(lambda n: f"&{n} 1")
    if depth == 0:
        return leaf
    inner = _node(depth - 1)
    return st.one_of(
        leaf,
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(inner, max_size=3).map(
            lambda xs: "{" + ", ".join(f"k{i}: {x}" for i, x in enumerate(xs)) + "}"
        ),
        st.tuples(_NAME, inner).map(lambda t: f"&{t[0]} [{t[1]}]"),
    )


_BLOCK = st.recursive(
    _node(2).map(lambda s: [s]),
    lambda inner: st.tuples(
        st.sampled_from(["- ", "k: ", "? ", "-\t"]), inner, st.integers(0, 3)
    ).map(lambda t: [t[0] + t[1][0], *(" " * (t[2] + 2) + line for line in t[1][1:])]),
    max_leaves=40,
)


def _events(text: str) -> tuple[int, bool] | None:
    """(depth, any anchor or alias) from libyaml's events, or None when not YAML."""
    import yaml

    depth = deepest = 0
    marked = False
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            marked |= getattr(event, "anchor", None) is not None
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                deepest = max(deepest, depth)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return None
    return deepest, marked


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        _node(6),
        _BLOCK.map("\n".join),
        st.lists(_BLOCK.map("\n".join), min_size=1, max_size=3).map(
            lambda docs: "\n".join(
                f"k{i}:\n" + "\n".join("  " + ln for ln in d.split("\n"))
                for i, d in enumerate(docs)
            )
        ),
        st.text(alphabet="[]{}&*-:? \t\n\r,ab'\"!#|>\x85\u2028", max_size=60),
    )
)
def test_nesting_and_aliases_never_raise_anything_but_the_clear_error(text: str) -> None:
    """Whatever the nesting and aliases, reading is a value or CorruptFile; and when the
    cheap byte check skips the scan, the scan would indeed have found nothing."""
    try:
        yamlio.load_yaml(text, where="gen.yaml")
        fastyaml.load(text, where="gen.yaml")
    except CorruptFile:
        pass
    found = _events(text)
    if found is not None and (found[1] or found[0] > safeload.MAX_DEPTH):
        with pytest.raises(CorruptFile):
            safeload.check_yaml(text, "gen.yaml")
    if not safeload.needs_scan(text) and found is not None:
        assert not found[1] and found[0] < safeload.MAX_DEPTH - 4


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3000), st.sampled_from(["[", '{"a":', "- ", " k:\n"]))
def test_any_depth_is_a_value_or_the_clear_error(depth: int, opener: str) -> None:
    if opener == "[":
        text = "x: " + "[" * depth + "]" * depth + "\n"
    elif opener == '{"a":':
        text = "x: " + opener * depth + "1" + "}" * depth + "\n"
    elif opener == "- ":
        text = "x:\n" + "- " * depth + "a\n"
    else:
        text = _deep_block(min(depth, 1200))
    for read in (yamlio.load_yaml, fastyaml.load):
        try:
            read(text, where="gen.yaml")
        except CorruptFile as exc:
            assert "nested more than" in str(exc)
    line = opener.replace("- ", "[").replace(" k:\n", '{"a":') * depth
    try:
        safeload.json_value(line, "line")
    except safeload.Unreadable as exc:
        assert "nested more than" in exc.detail or "not JSON" in exc.detail


def _staircase(steps: list[tuple[str, int]], flow: int) -> str:
    """Block collections nested as tightly as YAML allows: each step opens one at the
    current column (`k:` a mapping, `-` an indentless sequence or an item, `- ` and `? `
    compact ones on the same line) and moves `shift` columns right; a flow value of
    `flow` brackets at the bottom."""
    lines, col, pending = [], 0, ""
    for opener, shift in steps:
        if opener in ("- ", "? "):
            pending += opener  # compact: the next collection starts on this line
            continue
        lines.append(" " * col + pending + opener)
        col += len(pending) + shift
        pending = ""
    lines.append(" " * col + pending + "k: " + "[" * flow + "]" * flow)
    return "\n".join(lines) + "\n"


def test_the_deepest_document_the_byte_check_skips_is_within_the_limit() -> None:
    cols = safeload._BLOCK_COLUMNS - 1
    # a mapping and an indentless sequence per column: two levels a column, the most
    steps = [(op, shift) for _ in range(cols) for op, shift in (("k:", 0), ("-", 1))]
    text = _staircase(steps, safeload._FLOW_BRACKETS - 1)
    found = _events(text)
    assert found is not None and found[0] >= 2 * cols + safeload._FLOW_BRACKETS - 1
    assert not safeload.needs_scan(text) and found[0] < safeload.MAX_DEPTH
    assert yamlio.load_yaml(text, where="t")
    assert safeload.needs_scan(_staircase([*steps, ("k:", 0), ("-", 1)], 0))  # one more


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["k:", "-", "- ", "? ", "k:"]), st.integers(0, 2))),
    st.integers(0, 30),
)
def test_block_depth_is_bounded_by_the_columns_it_takes(
    steps: list[tuple[str, int]], flow: int
) -> None:
    text = _staircase(steps, flow)
    found = _events(text)
    if found is not None and not safeload.needs_scan(text):
        assert found[0] < safeload.MAX_DEPTH
    if found is not None and found[0] > safeload.MAX_DEPTH:
        with pytest.raises(CorruptFile, match="nested more than"):
            yamlio.load_yaml(text, where="t")


# -- every other file vouch reads from a repository ---------------------------------------
def _every_kind_of_file(kb: KB) -> dict[str, Path]:
    """One approved file of each sort vouch reads: a page, a decision record, a source's
    meta.yaml, an entity, a work session, and the configuration."""
    _approved(kb)
    page = proposed(kb, "kb.propose_page", {"title": "Deploy guide", "body": "## Steps\n\nShip.\n"})
    call(kb, "kb.approve", {"proposal_id": page["proposal_id"]}, actor=BOB)
    entity = proposed(kb, "kb.propose_entity", {"name": "Billing", "type": "system"})
    call(kb, "kb.approve", {"proposal_id": entity["proposal_id"]}, actor=BOB)
    call(kb, "kb.session_start", {"task": "read hostile files"})
    git(kb.root, "add", "-A")
    git(kb.root, "commit", "-qm", "a session", "--allow-empty")
    first = {p.parts[len(kb.dir.parts)]: p for p in sorted(kb.dir.rglob("*.*"))}
    return {
        name: first[top]
        for name, top in [
            ("page", "pages"),
            ("decision record", "decided"),
            ("source meta.yaml", "sources"),
            ("entity", "entities"),
            ("session", "sessions"),
        ]
        if top in first
    } | {"config": kb.dir / "config.yaml"}


def test_every_sort_of_knowledge_file_is_read_safely(
    kb_with_sources: KB, run_cli, caplog: pytest.LogCaptureFixture
) -> None:
    kb = kb_with_sources
    files = _every_kind_of_file(kb)
    assert {"page", "decision record", "source meta.yaml", "entity", "session"} <= set(files)
    for name, path in files.items():
        original = path.read_bytes()
        text = original.decode()
        if path.suffix == ".md":  # the bomb goes into the frontmatter
            hostile = text.replace("\n---\n", "\n" + _bomb() + "---\n", 1)
        else:
            hostile = text + _bomb()
        path.write_text(hostile)
        git(kb.root, "commit", "-qam", f"a billion laughs in the {name}")
        rel = path.relative_to(kb.root).as_posix()
        res = _quick(run_cli, "lint", cwd=kb.root, caplog=caplog)
        assert res.code in (1, 2) and "a YAML anchor (&a0)" in res.out + res.err, (name, res)
        assert rel in res.out + res.err, (name, res.out, res.err)
        for args in (["doctor"], ["list", "claims"], ["search", "deploys", "--fts-only"]):
            _quick(run_cli, *args, cwd=kb.root, caplog=caplog, limit=3.0)
        path.write_bytes(original)
        git(kb.root, "commit", "-qam", f"the {name} restored")


def test_a_proposal_vouch_could_not_read_back_is_refused_when_proposed(
    kb_with_sources: KB,
) -> None:
    """The outsider's finding: a 5 MB claim text was proposed, then approve refused vouch's
    own proposal as "not what vouch proposes" (past the reader's 1 MiB). Now proposing
    it says why, writes no branch, and a dry run says the same."""
    kb = kb_with_sources
    text = "word " * (safeload.MAX_YAML_CHARS // 5 + 10)
    for dry_run in (True, False):
        result = call(
            kb, "kb.propose_claim", {"text": text, "evidence": [a_source(kb)], "dry_run": dry_run}
        )
        assert result["valid"] is False and result["proposal_id"] is None
        assert any("more than vouch reads" in e for e in result["errors"]), result["errors"]
    assert git(kb.root, "for-each-ref", "refs/heads/vouch/") == ""
