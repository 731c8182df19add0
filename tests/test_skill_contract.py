"""SKILL.md that is tested (issue 18, point 7): its JSONL requests and commands run
against a real knowledge base; every closed set it lists is the enum `kb.capabilities`
states; every error code it names exists; it documents what an agent needs on the path
from a hit to an approved proposal. Capabilities and MCP tools state closed sets as JSON
Schema enums; no refusal suggests a way around review."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import a_source, call, propose_claim

from vouch import errors
from vouch.methods import registry as ops
from vouch.servers import errors as transport_errors
from vouch.servers import jsonl, server_context
from vouch.servers import mcp as mcp_server
from vouch.store.kb import KB

SKILL = Path(__file__).parent.parent / "SKILL.md"
TEXT = SKILL.read_text(encoding="utf-8")
FLAT = " ".join(TEXT.split())  # for a phrase wherever its lines break


def _enum(method: str, param: str) -> list[str]:
    schema = ops.get(method).input_schema()["properties"][param]
    return list(schema.get("enum") or schema["items"]["enum"])


CLOSED_SETS = {
    "Claim types": ("kb.propose_claim", "type"),
    "Page types": ("kb.propose_page", "type"),
    "Entity types": ("kb.propose_entity", "type"),
    "Relation types": ("kb.propose_relation", "relation"),
    "Scopes": ("kb.propose_claim", "scope"),
}


@pytest.mark.parametrize("label", sorted(CLOSED_SETS))
def test_every_closed_set_listed_is_the_capabilities_enum(label: str, kb: KB) -> None:
    listed = re.search(rf"^- {label}: (.+)$", TEXT, re.MULTILINE)
    assert listed, f"SKILL.md does not list {label}"
    method, param = CLOSED_SETS[label]
    caps = ops.capabilities(server_context("jsonl", kb_path=str(kb.dir)))
    described = next(m for m in caps["methods"] if m["name"] == method)
    assert [v.strip() for v in listed.group(1).split(",")] == described["params"]["properties"][
        param
    ]["enum"]
    statuses = re.search(r"^- Claim statuses: (.+)$", TEXT, re.MULTILINE)
    assert statuses and {v.strip() for v in statuses.group(1).split(",")} <= set(
        _enum("kb.search", "statuses")
    )


def test_closed_sets_are_enums_on_every_surface(kb: KB) -> None:
    tools = {t.name: t.input_schema for t in mcp_server.tools()}
    for method, param in CLOSED_SETS.values():
        schema = tools[ops.get(method).tool_name]["properties"][param]
        assert schema["enum"] and "one of" not in schema.get("description", "")
    # still checked by the gate, so that an invalid proposal lists every problem at once
    res = call(kb, "kb.propose_entity", {"name": "", "type": "planet", "dry_run": True})
    assert res["valid"] is False and len(res["errors"]) >= 2


def test_every_error_code_named_exists() -> None:
    known = {
        getattr(cls, "code", None)
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.VouchError)
    }
    named = set(re.findall(r"`(E\d{3})`", TEXT))
    assert named and named <= known, sorted(named - known)
    assert "`stale_cursor`" in TEXT and "stale_cursor" in known
    # the JSONL/MCP error categories: every one, and only those
    stated = re.search(r"`code` is ((?:`[a-z_]+`(?:,\s+|\s+or\s+))+`[a-z_]+`)", TEXT)
    assert stated and re.findall(r"`([a-z_]+)`", stated.group(1)) == list(transport_errors.CODES)


def test_it_documents_the_agents_path() -> None:
    for needle in (
        '"valid": false',
        "SOURCE_ID:L120-L134",
        "`cite`",
        "waits for",
        "vouch approve P1 P2 P3",
        "kb.revise_proposal",
        "kb.comment_proposal",
        "vouch install-agent",
        "unique prefix",
    ):
        assert needle in TEXT, needle


def _placeholders(kb: KB) -> dict[str, str]:
    sid = a_source(kb)
    proposal = call(kb, "kb.propose_claim", {"text": "Freeze windows stop deploys.",
                                             "evidence": [sid]})  # fmt: skip
    return {
        "SOURCE_ID": sid,
        "PROPOSAL_ID": proposal["proposal_id"],
        "ID": proposal["claim_id"],
        "SESSION_ID": call(kb, "kb.session_start", {"task": "skill"})["session_id"],
        "QUERY": "deploy freeze",
        "TASK": "change the deploy freeze",
        "FILE": "README.md",
        "NAME": "Freeze windows",
        "T": "A title",
    }


# -- stated output shapes, compared with real output ------------------------------------

ELIDED = "…"


def documented(text: str) -> Any:
    """A JSON value as SKILL.md shows it: `…` stands for what is left out (`, …}` more
    keys, `, …]` more items, `"ab…"` more characters)."""
    text = re.sub(r"([{,])\s*…\s*\}", r'\1 "…": "…"}', text)
    text = re.sub(r"([\[,])\s*…\s*\]", r'\1 "…"]', text)
    return json.loads(text)


def mismatches(doc: Any, real: Any, where: str = "$") -> list[str]:
    """Where `real` differs from the documented `doc`: the same keys (all of them unless
    `doc` elides some), value types and nesting; booleans, nulls and integers equal;
    strings equal, `…` in a documented string matching anything."""
    if isinstance(doc, dict):
        if not isinstance(real, dict):
            return [f"{where}: an object is documented, got {real!r}"]
        keys = set(doc) - {ELIDED}
        out = [f"{where}: no key {k!r}" for k in sorted(keys - set(real))]
        if ELIDED not in doc:
            out += [f"{where}: undocumented key {k!r}" for k in sorted(set(real) - keys)]
        for key in sorted(keys & set(real)):
            out += mismatches(doc[key], real[key], f"{where}.{key}")
        return out
    if isinstance(doc, list):
        if not isinstance(real, list):
            return [f"{where}: a list is documented, got {real!r}"]
        items = [d for d in doc if d != ELIDED]
        if len(real) < len(items) or (ELIDED not in doc and len(real) != len(items)):
            return [f"{where}: {len(items)} items documented, got {len(real)}"]
        return [m for i, d in enumerate(items) for m in mismatches(d, real[i], f"{where}[{i}]")]
    if doc is None or isinstance(doc, bool | int):
        same = real is doc if doc is None or isinstance(doc, bool) else real == doc
        return (
            []
            if same and type(real) is type(doc)
            else [f"{where}: {doc!r} documented, got {real!r}"]
        )
    if isinstance(doc, float):
        return [] if isinstance(real, float) else [f"{where}: a number documented, got {real!r}"]
    pattern = ".*".join(re.escape(part) for part in str(doc).split(ELIDED))
    if isinstance(real, str) and re.fullmatch(pattern, real, re.DOTALL):
        return []
    return [f"{where}: {doc!r} documented, got {real!r}"]


def test_mismatches_sees_a_wrong_key_type_or_value() -> None:
    real = {"ok": True, "result": {"valid": False, "errors": ["a", "b"], "proposal_id": None}}
    assert not mismatches(documented('{"ok": true, "result": {"valid": false, …}}'), real)
    assert not mismatches(documented('{"ok": true, "result": {"errors": ["a", …], …}}'), real)
    for wrong in (
        '{"ok": false, "result": {…}}',
        '{"ok": true, "result": {"valid": false}}',
        '{"ok": true, "result": {"ok": false, …}}',
        '{"ok": true, "result": {"errors": "a", …}}',
        '{"ok": true, "result": {"proposal_id": "p", …}}',
        '{"ok": true, "result": {"errors": ["x…"], …}}',
        '{"ok": true}',
    ):
        assert mismatches(documented(wrong), real), wrong


def exchanges() -> list[tuple[str, str]]:
    """Each `→ request` line of SKILL.md with the `← response` line under it."""
    pairs = re.findall(r"^→ (\{.*\})\n(?:← (\{.*\}))?", TEXT, re.MULTILINE)
    assert pairs
    return pairs


def test_every_jsonl_exchange_in_skill_md_is_what_the_server_answers(
    kb_with_sources: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOUCH_AGENT", "skill-reader")  # a server that may propose
    ctx = server_context("jsonl", kb_path=str(kb_with_sources.dir))
    before = git(kb_with_sources.root, "for-each-ref")
    for request, shown in exchanges():
        assert shown, f"no ← response shown under {request}"
        response = jsonl.handle_line(ctx, request.encode())
        assert not mismatches(documented(shown), response), (request, response)
    assert git(kb_with_sources.root, "for-each-ref") == before  # a dry run, a refusal


def test_every_command_in_skill_md_runs(kb_with_sources: KB, run_cli, tmp_path: Path) -> None:
    """Each `vouch ...` span, placeholders filled from a real knowledge base, is parsed
    and run: it may be refused (exit 1: the gate, a missing object) but never fails to
    parse, crashes or reports a system failure. The set-up ones (`init` in a new folder,
    `source add -r` of a folder) and `diff` of a proposal's branch must succeed, on a
    repository whose default branch is `master`, not `main`."""
    kb = kb_with_sources
    git(kb.root, "branch", "-m", "master")
    values = _placeholders(kb)
    values["BASE"] = "master"
    values["BRANCH"] = "vouch/proposal/" + values["PROPOSAL_ID"]
    spans = sorted(set(re.findall(r"`(vouch [^`]+)`", TEXT)))
    assert len(spans) > 20
    assert not [s for s in spans if re.search(r"\bmain\b", s)], "a command assumes `main`"
    ran, must = 0, {"init": 0, "source add -r": 0, "diff": 0}
    for span in spans:
        if "|" in span or "…" in span.replace('"…"', "") or "[" in span or "<" in span:
            continue  # a synopsis (alternatives, optional parts), not a command line
        line = span.replace('"…"', '"some text"').replace("'<json params>'", "'{}'")
        words = [values.get(w, w) for w in shlex.split(line)[1:]]
        words = [re.sub(r"SOURCE_ID|BASE|BRANCH", lambda m: values[m.group()], w) for w in words]
        if words[:1] in (["serve"], ["install-agent"]):
            continue  # a server (runs until EOF) / writes the host's files: tested apart
        if words[:1] == ["init"]:
            fresh = tmp_path / "new-project"  # not even a git repository yet
            fresh.mkdir()
            res = run_cli(*words, cwd=fresh)
            assert res.code == 0 and (fresh / ".vouch" / "config.yaml").is_file(), res.err
            assert git(fresh, "log", "--format=%s").strip(), "init committed nothing"
            must["init"] += 1
            continue
        if words[:3] == ["source", "add", "-r"]:
            folder = kb.root / words[3]
            (folder / "guide").mkdir(parents=True)
            (folder / "a.md").write_text("# A\n\nAlpha.\n")
            (folder / "guide" / "b.rst").write_text("B\n=\n\nBeta.\n")
            count = len(call(kb, "kb.list_sources", {"limit": 0}))
            res = run_cli(*words, cwd=kb.root, terminal=False)
            assert res.code == 0, res.err
            assert len(call(kb, "kb.list_sources", {"limit": 0})) == count + 2
            must["source add -r"] += 1
            continue
        res = run_cli(*words, "--as", "bob", cwd=kb.root)
        assert res.code in (0, 1), (span, res.err)
        assert "No such option" not in res.err and "unexpected extra" not in res.err, span
        assert "Traceback" not in res.err
        if words[0] == "diff":
            assert res.code == 0 and values["PROPOSAL_ID"] in res.out, (span, res.err)
            must["diff"] += 1
        ran += 1
    assert ran > 15
    assert all(must.values()), must


@pytest.fixture
def docs_kb(kb: KB, run_cli) -> KB:
    """The example documents as a project keeps them (docs/ in the repository, committed),
    registered the way SKILL.md says: `vouch source add -r docs`; one claim approved."""
    from vouch.methods.demo import example_files

    docs = kb.root / "docs"
    docs.mkdir()
    for path in example_files():
        (docs / path.name).write_bytes(path.read_bytes())
    git(kb.root, "add", "docs")
    git(kb.root, "commit", "-qm", "docs")
    assert run_cli("source", "add", "-r", "docs", cwd=kb.root).code == 0
    pid = propose_claim(kb, "No deploys happen on Fridays after 15:00 UTC.")
    call(kb, "kb.approve", {"proposal_id": pid}, actor="bob")
    return kb


QUERIES = ("deploy freeze", "incident", "who owns the database", "rollback", "Friday deploys")


def test_the_human_search_line_shown_is_the_real_one(docs_kb: KB, run_cli) -> None:
    """SKILL.md's `1. [score] …` line, its score, ids and line numbers made wildcards, is
    how a real search heads a hit on a terminal; in a pipe the same command prints JSON."""
    shown = re.search(r"`(1\. \[[^`]+)`", TEXT)
    assert shown, "SKILL.md shows no human search line"
    pattern = re.escape(shown.group(1))
    pattern = re.sub(  # the score as shown: as many decimals
        r"\\\[\d+\\\.(\d+)\\\]", lambda m: rf"\[\d+\.\d{{{len(m[1])}}}\]", pattern, count=1
    )
    pattern = re.sub(r"[0-9a-f]{12}", "[0-9a-f]{12}", pattern)
    pattern = re.sub(r"L\d+\\-L\d+", r"L\\d+-L\\d+", pattern)
    terminal = run_cli("search", "deploy freeze", cwd=docs_kb.root)
    assert terminal.code == 0, terminal.err
    headings = [line for line in terminal.out.splitlines() if re.match(r"\d+\. \[", line)]
    assert any(re.fullmatch(pattern, line) for line in headings), (pattern, headings)
    assert "Commands print JSON when stdout is not a terminal" in FLAT
    piped = run_cli("search", "deploy freeze", cwd=docs_kb.root, terminal=False)
    assert piped.json()["results"][0]["cite"].endswith(":L12-L14")


def test_the_scores_stated_are_the_real_scores(docs_kb: KB, run_cli) -> None:
    """The best hit's usual range, scores of 0 or more that are `fts + vector + prior`,
    RRF's first hit at 1/61 ≈ 0.016, and `--threshold` as the lowest `score` kept, on
    real searches (an approved claim among the hits, so the prior is in them)."""
    usual = re.search(r"best hit of a search usually scores between (\d+) and (\d+)", FLAT)
    assert usual, "SKILL.md states no range for the best hit's score"
    low, high = float(usual.group(1)), float(usual.group(2))
    assert re.search(r"default \(hybrid\) score is 0 or more", FLAT)
    assert "`fts + vector + prior` = `score`" in FLAT
    first = re.search(r"a first hit 1/(\d+) ≈ (0\.\d+)", TEXT)
    assert first and "1/(60 + rank)" in FLAT
    kinds = set()
    for query in QUERIES:
        results = call(docs_kb, "kb.search", {"query": query, "limit": 50})
        assert results, query
        assert low <= results[0]["score"] <= high, (query, results[0]["score"])
        for hit in results:
            kinds.add(hit["kind"])
            parts = hit["score_breakdown"]
            assert hit["score"] >= 0
            assert hit["score"] == pytest.approx(
                parts["fts"] + parts["vector"] + parts["prior"], abs=1e-5
            )
        for mode in ("fts", "vector"):
            ranked = call(docs_kb, "kb.search", {"query": query, "mode": mode})
            if ranked:
                assert ranked[0]["score"] == pytest.approx(1 / int(first.group(1)), abs=1e-6)
                assert f"{ranked[0]['score']:.3f}" == first.group(2)
    assert {"claim", "source"} <= kinds  # the prior is in the scores checked
    assert "`--threshold` / `threshold` (the lowest `score` kept)" in FLAT
    for mode in ("hybrid", "fts"):
        every = call(docs_kb, "kb.search", {"query": "deploy freeze", "mode": mode})
        # between two shown scores: a shown score is rounded (6 digits), the cut is not
        cut = (every[1]["score"] + every[2]["score"]) / 2
        kept = call(docs_kb, "kb.search", {"query": "deploy freeze", "mode": mode,
                                           "threshold": cut})  # fmt: skip
        assert [h["chunk_id"] for h in kept] == [h["chunk_id"] for h in every[:2]]
        res = run_cli("search", "deploy freeze", "--mode", mode, "--threshold", str(cut),
                      cwd=docs_kb.root, terminal=False)  # fmt: skip
        assert [h["score"] for h in res.json()["results"]] == [h["score"] for h in kept]


def _transport_rows() -> dict[str, tuple[str, str]]:
    """The table "Invalid proposal | Error" of SKILL.md, by transport."""
    table = TEXT[TEXT.index("| Transport | Invalid proposal") :].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == 3, line
        rows[cells[0]] = (cells[1], cells[2])
    assert set(rows) == {"CLI", "JSONL", "MCP"}, sorted(rows)
    return rows


def _stated(cell: str, name: str = "") -> Any:
    """The JSON value a cell shows (after `name: ` when given)."""
    prefix = re.escape(f"{name}: ") if name else ""
    found = re.search(rf"`{prefix}(\{{.*?\}})`", cell)
    assert found, (name, cell)
    return documented(found.group(1))


def test_invalid_and_error_are_what_each_transport_returns(
    docs_kb: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same invalid proposal (empty text) and the same error (an unknown source) over
    the CLI (a pipe), `vouch call`, JSONL and MCP (the SDK's client, a real server): exit
    status, `ok`, `isError` and the JSON shapes are as SKILL.md's table says, and nothing
    is written."""
    from test_servers_mcp import run_client

    kb = docs_kb
    rows = _transport_rows()
    invalid = {"text": "", "evidence": [f"{a_source(kb)}:L12-L14"]}
    error = {"text": "Deploys stop on Fridays.", "evidence": ["0123456789abcdef"]}
    before = git(kb.root, "for-each-ref"), git(kb.root, "status", "--porcelain")

    cli = {
        "invalid": run_cli("propose-claim", "--text", "", "--source", invalid["evidence"][0],
                           cwd=kb.root, terminal=False),
        "error": run_cli("propose-claim", "--text", error["text"], "--source",
                         error["evidence"][0], cwd=kb.root, terminal=False),
    }  # fmt: skip
    for (case, res), cell in zip(cli.items(), rows["CLI"], strict=True):
        exit_status = re.match(r"exit (\d)", cell)
        assert exit_status and res.code == int(exit_status.group(1)), (case, res)
        assert not mismatches(_stated(cell), res.json()), (case, res.out)
        assert res.err.startswith(f"error[{res.json()['error']['code']}]: "), res.err
    assert "`error[E101]: message` on stderr" in FLAT

    monkeypatch.setenv("VOUCH_AGENT", "skill-reader")
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    for params, cell in zip((invalid, error), rows["JSONL"], strict=True):
        line = json.dumps({"id": 7, "method": "kb.propose_claim", "params": params})
        response = jsonl.handle_line(ctx, line.encode())
        assert response.pop("id") == 7
        assert not mismatches(_stated(cell), response), (params, response)
    # `vouch call` answers like JSONL's result
    assert "`vouch call` answers like JSONL's `result`" in FLAT
    called = run_cli("call", "kb.propose_claim", json.dumps(invalid), cwd=kb.root, terminal=False)
    assert called.code == 0, called.err
    assert not mismatches(_stated(rows["JSONL"][0])["result"], called.json())

    async def session(client: Any) -> list[Any]:
        return [await client.call_tool("kb_propose_claim", p) for p in (invalid, error)]

    results = run_client(kb, session, client_name="skill", env={"VOUCH_AGENT": "skill-reader"})
    for result, cell in zip(results, rows["MCP"], strict=True):
        is_error = re.search(r"`isError: (true|false)`", cell)
        assert is_error and result.is_error is (is_error.group(1) == "true"), (cell, result)
        assert not mismatches(_stated(cell, "structuredContent"), result.structured_content)
    failed = results[1]
    code = failed.structured_content["error"]["vouch_code"]
    assert failed.content[0].text.startswith(f"error[{code}]: ")
    assert "`error[<vouch_code>]: message (hint)`" in FLAT
    assert (git(kb.root, "for-each-ref"), git(kb.root, "status", "--porcelain")) == before


def test_the_agent_tool_set_stated_is_the_one_mcp_serves(kb: KB) -> None:
    """ "the agent tool set, N tools: `kb_…`, `kb_read_*`, … (and `kb_approve`, … with
    `--allow-decisions`)" is, name for name, what an MCP server lists by default."""
    import fnmatch

    stated = re.search(r"agent tool set, (\d+) tools: (.*?)\(and(.*?)with\s+`--allow-decisions`\)",
                       TEXT, re.DOTALL)  # fmt: skip
    assert stated, "SKILL.md does not state the agent tool set"
    every = [m.tool_name for m in ops.REGISTRY.values()]

    def named(part: str) -> set[str]:
        globs = re.findall(r"`(kb_[a-z_*]+)`", part)
        return {n for g in globs for n in every if fnmatch.fnmatchcase(n, g)}

    served = {t.name for t in mcp_server.tools(server_context("mcp", kb_path=str(kb.dir)))}
    assert named(stated.group(2)) == served
    assert int(stated.group(1)) == len(served)
    deciding = server_context("mcp", kb_path=str(kb.dir), allow_decisions=True)
    assert named(stated.group(3)) == {t.name for t in mcp_server.tools(deciding)} - served


def _keys(spec: str) -> dict[str, set[str] | None]:
    """`a, b: {c, d}, e: "x"` → {a: None, b: {c, d}, e: None}: the names a shape lists."""
    spec = re.sub(r"\[[^\]]*\]", "", spec)
    out: dict[str, set[str] | None] = {}
    for name, inner in re.findall(r"([a-z_]+)(?::\s*(?:\{([^}]*)\}|\"[^\"]*\"))?", spec):
        out[name] = set(re.findall(r"[a-z_]+", inner)) if inner else None
    return out


def test_the_search_and_context_shapes_stated_are_the_real_ones(docs_kb: KB, run_cli) -> None:
    """The fields SKILL.md lists for `vouch search --json`, each result (and its
    `score_breakdown` and `source`) and the ContextPack are the real output's."""
    envelope = re.search(r"`vouch search --json` returns `\{(.*?)\}`\.", TEXT, re.DOTALL)
    each = re.search(r"Each result: (.*?)\. A hit with", TEXT, re.DOTALL)
    pack = re.search(r"returns it \(`--format markdown`: prompt-ready text\): `\{(.*?)\}`", TEXT,
                     re.DOTALL)  # fmt: skip
    assert envelope and each and pack
    res = run_cli("search", "Friday deploys", "--json", cwd=docs_kb.root)
    real = res.json()
    assert set(_keys(envelope.group(1))) == set(real)
    fields: dict[str, set[str] | None] = {}
    for span in re.findall(r"`([a-z_]+(?::\s*\{[^}]*\})?)`", each.group(1)):
        fields.update(_keys(span))
    hits = {hit["kind"]: hit for hit in real["results"]}
    assert {"claim", "source"} <= set(hits)
    for hit in hits.values():
        assert set(fields) == set(hit), hit["kind"]
        for name, inner in fields.items():
            if inner is not None:
                assert inner == set(hit[name]), name
    context = call(docs_kb, "kb.context", {"task": "change the deploy freeze"})
    stated = _keys(pack.group(1))
    assert set(stated) <= set(context)
    items = re.search(r"items: \[\{([^}]*)\}\]", pack.group(1))
    assert items and context["items"]
    assert set(re.findall(r"[a-z_]+", items.group(1))) <= set(context["items"][0])


def test_the_result_fields_stated_exist(kb_with_sources: KB, run_cli) -> None:
    """`→ {ok, proposals}` after kb.session_end, crystallize's `{page_id, …}`, the
    caller in capabilities, `waits_for: [{id, proposal_id}]`, a revision's fields, the
    pending rows' and a listing's: each field SKILL.md names is in the real result."""
    kb = kb_with_sources
    sid = a_source(kb)

    def stated(after: str) -> set[str]:
        found = re.search(re.escape(after) + r"[^`]*?`\{([^}`]*)\}`", TEXT, re.DOTALL)
        assert found, after
        return set(re.findall(r"[a-z_]+", found.group(1)))

    session = call(kb, "kb.session_start", {"task": "skill"})
    assert "→ `session_id`" in TEXT and set(session) >= {"session_id"}
    one = call(kb, "kb.propose_entity", {"name": "Deploy bot", "type": "tool"})
    two = call(kb, "kb.propose_entity", {"name": "Billing", "type": "system"})
    linked = call(kb, "kb.propose_relation", {"source": one["entity_id"],
                  "target": two["entity_id"], "relation": "uses", "evidence": [sid],
                  "session_id": session["session_id"]})  # fmt: skip
    waits = re.search(r"`waits_for: \[\{([a-z_, ]+)\}\]`", TEXT)
    assert waits and linked["waits_for"]
    assert set(re.findall(r"[a-z_]+", waits.group(1))) == set(linked["waits_for"][0])
    claim = call(kb, "kb.propose_claim", {"text": "Deploys freeze on Fridays.",
                 "evidence": [f"{sid}:L12-L14"], "session_id": session["session_id"]})  # fmt: skip
    call(kb, "kb.comment_proposal", {"proposal_id": claim["proposal_id"], "text": "cite more"})
    text = "Deploys freeze on Fridays after 15:00."
    revised = call(kb, "kb.revise_proposal", {"proposal_id": claim["proposal_id"], "text": text})
    assert "(`valid`, `revision`, `<kind>_id` in the result)" in FLAT
    assert {"valid", "revision", "claim_id"} <= set(revised)
    assert "rows say `comments` and `revised_since_comment`" in FLAT
    assert {"comments", "revised_since_comment"} <= set(call(kb, "kb.list_pending")[0])
    ended = call(kb, "kb.session_end", {"session_id": session["session_id"]})
    assert stated("`vouch session end SESSION_ID`\n   →") <= set(ended)
    summary = call(kb, "kb.crystallize", {"session_id": session["session_id"]})
    assert stated("(`claims_promoted`) →") <= set(summary)
    caller = re.search(r"`caller: \{([a-z_, ]+)\}`", TEXT)
    assert caller
    real = call(kb, "kb.capabilities")["caller"]
    assert set(re.findall(r"[a-z_]+", caller.group(1))) <= set(real)
    assert "JSON has `total` and `next_offset`" in FLAT
    listed = run_cli("list", "sources", "--limit", "1", cwd=kb.root, terminal=False).json()
    assert {"total", "next_offset"} <= set(listed) and listed["next_offset"] == 1


def test_the_mcp_configuration_shown_is_what_install_agent_writes(kb: KB, run_cli) -> None:
    """The `.mcp.json` of SKILL.md is `install-agent claude-code`'s, but for the command
    (an absolute path to vouch, or to its Python followed by `-m vouch`)."""
    shown = re.search(r"```json\n(\{\"mcpServers\".*?)\n```", TEXT, re.DOTALL)
    assert shown
    res = run_cli("install-agent", "claude-code", cwd=kb.root)
    assert res.code == 0, res.err
    real = json.loads((kb.root / ".mcp.json").read_text())
    entry = real["mcpServers"]["vouch"]
    assert Path(entry["command"]).is_absolute()
    if entry["args"][:2] == ["-m", "vouch"]:
        entry["args"] = entry["args"][2:]
    doc = json.loads(shown.group(1))
    entry["command"] = doc["mcpServers"]["vouch"]["command"]
    assert not mismatches(doc, real), real


def test_a_read_of_an_unknown_id_is_null_as_stated(kb_with_sources: KB) -> None:
    """SKILL.md: a read of an unknown id is no error, its result is null (kb-methods.md)."""
    assert "A read of an unknown id (`kb.read_claim`, …)\nis no error: its result is `null`" in TEXT
    ctx = server_context("jsonl", kb_path=str(kb_with_sources.dir))
    line = {"id": 7, "method": "kb.read_claim", "params": {"id": "no-such-claim-0123abcd"}}
    response = jsonl.handle_line(ctx, json.dumps(line).encode())
    assert response == {"id": 7, "ok": True, "result": None}
