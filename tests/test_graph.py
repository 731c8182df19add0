"""`vouch graph` (issue 37 item 1): the knowledge around one object or the whole branch,
as nodes and edges, drawn as mermaid or DOT; and `vouch diff --format markdown` drawing
what a range adds. Real repositories; object text is hostile input."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from built_once import built_once, copied
from conftest import git
from gate_support import BOB, a_source, branches, call, show

from vouch.errors import InvalidId, NotFound
from vouch.methods.shape import InvalidParams
from vouch.review.graph_render import dot, left_out, mermaid, mermaid_block
from vouch.store.kb import KB


def _proposed(kb: KB, method: str, params: dict[str, Any]) -> tuple[str, str]:
    """(proposal id, object id) of a valid proposal."""
    result = call(kb, method, params)
    assert result["valid"], result
    field = next(k for k in result if k.endswith("_id") and k not in ("proposal_id",))
    return str(result["proposal_id"]), str(result[field])


def _approved(kb: KB, method: str, params: dict[str, Any]) -> str:
    pid, oid = _proposed(kb, method, params)
    show(kb, pid)
    call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    return oid


def _world(kb: KB) -> dict[str, str]:
    """Two entities and a relation, claims about one citing a source (by a span and
    whole), a page, a supersession and a contradiction — all approved."""
    sid = a_source(kb)
    api = _approved(kb, "kb.propose_entity", {"name": "payments-api", "type": "system"})
    db = _approved(kb, "kb.propose_entity", {"name": "ledger-db", "type": "system"})
    rel = _approved(
        kb,
        "kb.propose_relation",
        {"source": api, "relation": "depends_on", "target": db, "evidence": [sid]},
    )
    spanned = _approved(
        kb,
        "kb.propose_claim",
        {"text": "Deploys need CI", "evidence": [f"{sid}:L1"], "entities": [api]},
    )
    whole = _approved(kb, "kb.propose_claim", {"text": "There is a runbook", "evidence": [sid]})
    page = _approved(
        kb,
        "kb.propose_page",
        {"title": "Deploying", "body": "# Deploying\n\nSee.\n", "claims": [spanned]},
    )
    newer = _approved(
        kb,
        "kb.propose_claim",
        {"text": "Deploys need two CI runs", "evidence": [sid], "entities": [api]},
    )
    call(kb, "kb.supersede", {"old_id": spanned, "new_id": newer, "reason": "two"}, actor=BOB)
    other = _approved(kb, "kb.propose_claim", {"text": "There is no runbook", "evidence": [sid]})
    call(kb, "kb.contradict", {"a_id": whole, "b_id": other, "reason": "which?"}, actor=BOB)
    return {
        "source": sid,
        "api": api,
        "db": db,
        "relation": rel,
        "spanned": spanned,
        "whole": whole,
        "page": page,
        "newer": newer,
        "other": other,
    }


class World(NamedTuple):
    kb: KB
    ids: dict[str, str]


class Hostile(NamedTuple):
    kb: KB
    ids: dict[str, str]
    proposal: str  # the open proposal of a hostile claim
    texts: dict[str, str]  # object id -> the hostile text it holds


def _built(tmp_path_factory: pytest.TempPathFactory, name: str, make: Any) -> tuple[Path, Any]:
    """A knowledge base with the example sources and what `make` adds, built once a
    session (approvals take a while; `built_once`); each test gets a copy."""
    from conftest import _build_kb_with_sources

    def build(root: Path) -> Any:
        _build_kb_with_sources(root)
        return make(KB.open(root))

    return built_once(tmp_path_factory, name, build)


def _copy(template: Path, tmp_path: Path) -> KB:
    return KB.open(copied(template, tmp_path / "repo"))


@pytest.fixture(scope="module")
def built_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    return _built(tmp_path_factory, "graph-world", _world)


@pytest.fixture(scope="module")
def built_hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    return _built(tmp_path_factory, "graph-hostile", _hostile_world)


@pytest.fixture
def world(built_world: tuple[Path, Any], tmp_path: Path) -> World:
    return World(_copy(built_world[0], tmp_path), dict(built_world[1]))


@pytest.fixture
def hostile(built_hostile: tuple[Path, Any], tmp_path: Path) -> Hostile:
    w, pid, texts = built_hostile[1]
    return Hostile(_copy(built_hostile[0], tmp_path), dict(w), pid, dict(texts))


def _ids(graph: dict[str, Any]) -> set[str]:
    return {str(n["id"]) for n in graph["nodes"]}


def _edges(graph: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(str(e["from"]), str(e["to"]), str(e["kind"])) for e in graph["edges"]}


def _refs_and_tree(root: Path) -> tuple[str, str]:
    """Every ref and the work tree's state: what a read must leave as it was."""
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)"), git(
        root, "status", "--porcelain", "--untracked-files=all", "--ignored"
    )


# -- around one object ---------------------------------------------------------------------
def test_around_an_entity_breadth_first_to_the_depth(world: World) -> None:
    kb, w = world
    before = _refs_and_tree(kb.root)

    only = call(kb, "kb.graph", {"id": w["api"], "depth": 0})
    assert _ids(only) == {w["api"]} and only["edges"] == []

    near = call(kb, "kb.graph", {"id": w["api"], "depth": 1})
    # the claims about it (found by what names it) and the relation's other end
    assert _ids(near) == {w["api"], w["db"], w["spanned"], w["newer"]}
    assert (w["api"], w["db"], "depends_on") in _edges(near)
    rel = next(e for e in near["edges"] if e["kind"] == "depends_on")
    assert rel["relation_id"] == w["relation"]
    assert (w["newer"], w["spanned"], "supersedes") in _edges(near)

    two = call(kb, "kb.graph", {"id": w["api"]})  # depth 2 by default
    assert two["depth"] == 2 and two["center"] == w["api"]
    assert _ids(two) == _ids(near) | {w["source"], w["page"]}
    assert w["whole"] not in _ids(two)  # three hops away (through the source)
    by = {n["id"]: n for n in two["nodes"]}
    assert by[w["spanned"]]["status"] == "superseded" and by[w["spanned"]]["faded"]
    assert not by[w["newer"]].get("faded")
    cited = next(e for e in two["edges"] if e["from"] == w["spanned"] and e["kind"] == "cites")
    assert cited["to"] == w["source"] and cited["locator"] == "L1"  # the span, as its source
    sup = next(e for e in two["edges"] if e["kind"] == "supersedes")
    assert sup["dashed"] is True
    assert (w["page"], w["spanned"], "lists") in _edges(two)
    assert two["omitted"] == {"nodes": {}, "edges": 0} and not two["truncated"]
    assert _refs_and_tree(kb.root) == before  # read-only


def test_around_a_source_and_a_relation(world: World) -> None:
    kb, w = world
    near = call(kb, "kb.graph", {"id": w["source"], "depth": 1})
    # the claims citing it, whole or through an evidence span; the contradiction drawn
    assert _ids(near) == {w["source"], w["spanned"], w["whole"], w["newer"], w["other"]}
    by = {n["id"]: n for n in near["nodes"]}
    assert by[w["whole"]]["contradicted"] and by[w["other"]]["contradicted"]
    assert by[w["whole"]]["status"] == "contested"
    pair = tuple(sorted((w["whole"], w["other"])))
    assert (*pair, "contradicts") in _edges(near)

    alone = call(kb, "kb.graph", {"id": w["whole"], "depth": 0})  # the other one not drawn
    assert alone["nodes"][0]["contradicted"] is True and alone["edges"] == []

    ends = call(kb, "kb.graph", {"id": w["relation"], "depth": 0})  # a relation: its two ends
    assert _ids(ends) == {w["api"], w["db"]}
    assert _edges(ends) == {(w["api"], w["db"], "depends_on")}


# -- the whole branch ----------------------------------------------------------------------
def test_the_whole_branch(world: World, run_cli: Any) -> None:
    kb, w = world
    g = call(kb, "kb.graph", {})
    assert g["center"] is None
    assert _ids(g) == set(w.values()) - {w["relation"]}  # a relation is an edge
    assert g["counts"] == {"claim": 4, "entity": 2, "page": 1, "source": 1}
    assert len(g["edges"]) == 10 and not g["truncated"]
    # the registered sources nobody cites are not knowledge anyone drew on
    assert all(n["kind"] != "source" or n["id"] == w["source"] for n in g["nodes"])

    piped = run_cli("graph", cwd=kb.root, terminal=False)  # a pipe: the method's result
    assert piped.code == 0 and piped.json() == g

    # drawn: supersession and contradiction dashed, the superseded claim faded
    drawn = run_cli("graph", cwd=kb.root)  # a terminal: mermaid
    assert drawn.code == 0 and drawn.out == mermaid(g) and drawn.err == ""
    old, new = _name(g, w["spanned"]), _name(g, w["newer"])
    assert f'  {new} -.->|"supersedes"| {old}' in drawn.out.splitlines()
    pair = sorted((w["whole"], w["other"]))
    contra = f'  {_name(g, pair[0])} -.->|"contradicts"| {_name(g, pair[1])}'
    assert contra in drawn.out.splitlines()
    assert f'  {_name(g, w["api"])} -->|"depends on"| {_name(g, w["db"])}' in drawn.out
    assert re.search(rf"^  class {old} faded$", drawn.out, re.M)
    contested = {_name(g, w["whole"]), _name(g, w["other"])}
    found = re.search(r"^  class (\S+) contradicted$", drawn.out, re.M)
    assert found is not None and set(found.group(1).split(",")) == contested
    _real_mermaid(drawn.out, g, _checked_mermaid(drawn.out))
    as_dot = run_cli("graph", "--format", "dot", cwd=kb.root).out
    assert f'  {new} -> {old} [label="supersedes", style=dashed];' in as_dot
    assert re.search(
        rf"^  {old} \[label=\"claim: Deploys need CI \(superseded\)\", shape=box, style=dashed\];$",
        as_dot,
        re.M,
    )
    md = run_cli("graph", "--format", "markdown", cwd=kb.root).out
    assert md == mermaid_block(g) and md.startswith("```mermaid\n") and md.endswith("```\n")


def test_a_capped_graph_says_what_it_left_out(world: World, run_cli: Any) -> None:
    kb, w = world
    g = call(kb, "kb.graph", {"max_nodes": 3, "max_edges": 1})
    assert len(g["nodes"]) == 3 and len(g["edges"]) <= 1 and g["truncated"]
    left = g["omitted"]["nodes"]
    shown: dict[str, int] = {}
    for n in g["nodes"]:
        shown[n["kind"]] = shown.get(n["kind"], 0) + 1
    whole = {"claim": 4, "entity": 2, "page": 1, "source": 1}
    assert {k: shown.get(k, 0) + left.get(k, 0) for k in whole} == whole
    every = call(kb, "kb.graph", {})["edges"]  # the edges left out are counted whole
    assert len(g["edges"]) + g["omitted"]["edges"] == len(every) == 10
    # the best-connected first: the source four claims cite
    assert g["nodes"][0]["id"] == w["source"]

    drawn = run_cli("graph", "--max-nodes", "3", "--max-edges", "1", cwd=kb.root)
    assert drawn.code == 0
    note = re.search(r"^  omitted>\"(.*)\"\]$", drawn.out, re.M)
    assert note is not None and "not shown" in note.group(1)
    assert re.search(r"^  %% not shown: .*claim", drawn.out, re.M)
    assert "not shown:" in drawn.err  # said to the person too
    _real_mermaid(drawn.out, g, _checked_mermaid(drawn.out))
    for kind, n in left.items():
        assert f"{n} {kind[:5]}" in drawn.err

    around = call(kb, "kb.graph", {"id": w["api"], "max_nodes": 2})
    assert around["nodes"][0]["id"] == w["api"]  # the nearest kept
    # the cap was full after one hop: the second is not walked, and that is said
    assert sum(around["omitted"]["nodes"].values()) == 2
    assert around["omitted"]["hops_not_walked"] == 1 and around["truncated"]
    assert "the last 1 hop(s), not walked" in left_out(around)  # type: ignore[operator]


# -- pending -------------------------------------------------------------------------------
def test_pending_objects_only_when_asked_or_at_the_centre(world: World) -> None:
    kb, w = world
    pid, claim = _proposed(
        kb,
        "kb.propose_claim",
        {"text": "Payments retries thrice", "evidence": [w["source"]], "entities": [w["api"]]},
    )
    before = _refs_and_tree(kb.root)

    approved_only = call(kb, "kb.graph", {"id": w["api"], "depth": 1})
    assert claim not in _ids(approved_only)
    assert claim not in _ids(call(kb, "kb.graph", {}))

    asked = call(kb, "kb.graph", {"id": w["api"], "depth": 1, "pending": True})
    node = next(n for n in asked["nodes"] if n["id"] == claim)
    assert node["pending"] == pid and asked["pending"] is True
    edge = next(e for e in asked["edges"] if e["from"] == claim)
    assert edge["pending"] == pid
    assert all("pending" not in n for n in asked["nodes"] if n["id"] != claim)
    whole = call(kb, "kb.graph", {"pending": True})
    assert claim in _ids(whole)

    centre = call(kb, "kb.graph", {"id": claim, "depth": 1})  # only a proposal holds it
    assert centre["pending"] is True
    assert _ids(centre) == {claim, w["source"], w["api"]}
    assert next(n for n in centre["nodes"] if n["id"] == claim)["pending"] == pid

    drawn = mermaid(asked)
    name = _name(asked, claim)
    assert re.search(rf"^  class (\S+,)?{name}(,\S+)? pending$", drawn, re.M)
    assert f"pending {pid}" in _checked_mermaid(drawn)[name]
    assert _refs_and_tree(kb.root) == before  # read-only, the proposal untouched


def test_a_hand_built_proposal_cannot_pass_for_another_object(world: World) -> None:
    """Proposal branches rewritten with git plumbing: one puts an approved claim's id in
    the file at its own claim's path, one puts bytes that are no claim there. Neither is
    drawn (nor breaks the graph); the approved claim stays approved, nothing written."""
    from test_gate_hostile import edited_tree, rewrite

    from vouch.kinds import KINDS

    kb, w = world
    params = {"evidence": [w["source"]], "entities": [w["api"]]}
    posing, a = _proposed(kb, "kb.propose_claim", {"text": "Payments is fine", **params})
    broken, b = _proposed(kb, "kb.propose_claim", {"text": "Payments is slow", **params})
    path_a = kb.rel(KINDS["claim"].path_for(a))
    text = git(kb.root, "show", f"refs/heads/vouch/proposal/{posing}:{path_a}")
    rewrite(kb, posing, edited_tree(kb, posing, {path_a: text.replace(a, w["newer"]).encode()}))
    path_b = kb.rel(KINDS["claim"].path_for(b))
    rewrite(kb, broken, edited_tree(kb, broken, {path_b: b'text: "]; click\x00 [\n'}))
    before = _refs_and_tree(kb.root)

    g = call(kb, "kb.graph", {"id": w["api"], "depth": 1, "pending": True})
    assert a not in _ids(g) and b not in _ids(g)
    newer = next(n for n in g["nodes"] if n["id"] == w["newer"])
    assert "pending" not in newer and newer["title"] == "Deploys need two CI runs"
    assert all("pending" not in n for n in g["nodes"])
    with pytest.raises(NotFound):  # neither is a pending object to centre on
        call(kb, "kb.graph", {"id": a})
    with pytest.raises(NotFound):
        call(kb, "kb.graph", {"id": b})
    assert call(kb, "kb.graph", {"pending": True})["counts"]["claim"] == 4
    assert _refs_and_tree(kb.root) == before


def test_a_one_sided_contradiction_marks_both_claims(world: World) -> None:
    """A proposal whose claim says it contradicts an approved one (a file written by
    hand: one side only): with --pending, the approved claim is drawn contradicted too."""
    from test_gate_hostile import edited_tree, rewrite

    from vouch.kinds import KINDS

    kb, w = world
    pid, cid = _proposed(
        kb, "kb.propose_claim", {"text": "Deploys need no CI", "evidence": [w["source"]]}
    )
    path = kb.rel(KINDS["claim"].path_for(cid))
    text = git(kb.root, "show", f"refs/heads/vouch/proposal/{pid}:{path}")
    assert "contradicts: []" in text
    one_sided = text.replace("contradicts: []", f"contradicts:\n  - {w['newer']}")
    rewrite(kb, pid, edited_tree(kb, pid, {path: one_sided.encode()}))

    g = call(kb, "kb.graph", {"id": w["newer"], "depth": 1, "pending": True})
    by = {n["id"]: n for n in g["nodes"]}
    assert by[cid]["pending"] == pid and by[cid]["contradicted"]
    assert by[w["newer"]]["contradicted"] is True  # its own file names no contradiction
    assert "contradicted" not in by[w["api"]]


def test_unknown_ids_and_bad_limits_are_clear_errors(kb_with_sources: KB, run_cli: Any) -> None:
    kb = kb_with_sources
    with pytest.raises(NotFound):
        call(kb, "kb.graph", {"id": "no-such-claim-00000000"})
    with pytest.raises(InvalidId):
        call(kb, "kb.graph", {"id": "../../etc/passwd"})
    with pytest.raises(InvalidParams):
        call(kb, "kb.graph", {"depth": 99})
    with pytest.raises(InvalidParams):
        call(kb, "kb.graph", {"max_nodes": 0})
    bad = run_cli("graph", "no-such-claim-00000000", "--format", "dot", cwd=kb.root)
    assert bad.code == 1 and "E200" not in bad.out + bad.err and "Traceback" not in bad.err
    wrong = run_cli("graph", "--format", "svg", cwd=kb.root)
    assert wrong.code == 1 and "Traceback" not in wrong.err


# -- drawing: the text is hostile ------------------------------------------------------------
_LABEL = r"(?:[A-Za-z0-9 .,:\-/()?!+=@]|#\d+;)*"
_OPEN_CLOSE = {'["': '"]', '(["': '"])', '[["': '"]]', '[("': '")]', '{{"': '"}}'}
_MERMAID_LINES = (
    re.compile(r"^%% vouch graph: \d+ nodes, \d+ edges$"),
    re.compile(r"^flowchart LR$"),
    re.compile(rf"^  (?P<name>n\d+)(?P<open>\[\(\[\[\[\(\{{\{{)?\"?(?P<label>{_LABEL})\"?$"),
    re.compile(rf'^  n\d+ (-->|-\.->)\|"{_LABEL}"\| n\d+$'),
    re.compile(rf"^  %% {_LABEL}$"),
    re.compile(rf'^  omitted>"{_LABEL}"\]$'),
    re.compile(r"^  classDef (faded|contradicted|pending|changed|note) [a-z0-9:#, -]+$"),
    re.compile(r"^  class (n\d+(,n\d+)*|omitted) (faded|contradicted|pending|changed|note)$"),
)
_NODE = re.compile(
    rf'^  (n\d+)(\["|\(\["|\[\["|\[\("|\{{\{{")({_LABEL})("\]|"\]\)|"\]\]|"\)\]|"\}}\}})$'
)


def _real_mermaid(text: str, graph: dict[str, Any], labels: dict[str, str]) -> None:
    """Where VOUCH_MERMAID_MODULES names a node_modules folder with `mermaid` and `jsdom`,
    the real mermaid parses `text`: a flowchart of exactly our nodes, labels as we
    wrote them, no link, no configuration from a directive. (Without it the line grammar
    of `_checked_mermaid` is the check.)"""
    modules = os.environ.get("VOUCH_MERMAID_MODULES")
    if not modules or not shutil.which("node"):
        return
    script = Path(__file__).parent / "fixtures" / "mermaid_parse.mjs"
    run = subprocess.run(
        ["node", str(script), modules], input=text, capture_output=True, text=True, timeout=120
    )
    found = json.loads(run.stdout)
    assert found["ok"] and found["type"] == "flowchart-v2" and found["config"] == {}, found
    vertices = found["vertices"]
    names = {f"n{i}" for i in range(len(graph["nodes"]))}
    assert set(vertices) - {"omitted"} == names
    assert found["edges"] == len(graph["edges"])
    for name, vertex in vertices.items():
        assert vertex["link"] is None and "clickable" not in vertex["classes"]
        shown = re.sub(
            r"\ufb02\u00b0\u00b0(\d+)\u00b6\u00df", lambda m: chr(int(m.group(1))), vertex["text"]
        )
        if name in labels:
            assert shown == labels[name]


def _name(graph: dict[str, Any], object_id: str) -> str:
    return f"n{[n['id'] for n in graph['nodes']].index(object_id)}"


def _checked_mermaid(text: str) -> dict[str, str]:
    """Every line of `text` is one of the few statements vouch writes, each label only
    inert characters and entity codes: node name -> its label, decoded."""
    labels: dict[str, str] = {}
    lines = text.splitlines()
    assert lines[:2] == [lines[0], "flowchart LR"]
    for line in lines:
        node = _NODE.match(line)
        if node is not None:
            assert _OPEN_CLOSE[node.group(2)] == node.group(4), line
            labels[node.group(1)] = re.sub(
                r"#(\d+);", lambda m: chr(int(m.group(1))), node.group(3)
            )
            continue
        assert any(p.match(line) for p in _MERMAID_LINES[:2] + _MERMAID_LINES[3:]), line
    assert (
        "%%{" not in text and "click" not in text.replace("click", "click", 0).split("flowchart")[0]
    )
    return labels


HOSTILE = (  # each drawn whole (at most 53 characters), but the last
    '"]; click n0 href "javascript:alert(1)"',
    '%%{init: {"securityLevel": "loose"}}%% boom',
    "line one\nclick n1 call alert(1)\n%% x",
    "`**bold**` <img src=x onerror=alert(1)> | a --> b",
    "[a](javascript:x) ~~x~~ _y_ #35; &amp; \\l \\N;",
    "x" * 200,
)


def _hostile_world(kb: KB) -> tuple[dict[str, str], str, dict[str, str]]:
    """Claims with hostile texts (approved), an entity with a hostile name, and one
    hostile claim only a proposal holds: (world, proposal id, claim id -> its text)."""
    w = _world(kb)
    ent = _approved(kb, "kb.propose_entity", {"name": 'evil"]-->n0; %%{x}%%', "type": "system"})
    texts = {ent: 'evil"]-->n0; %%{x}%%'}
    for text in HOSTILE[:-1]:
        cid = _approved(
            kb, "kb.propose_claim", {"text": text, "evidence": [w["source"]], "entities": [ent]}
        )
        texts[cid] = text
    pid, cid = _proposed(
        kb,
        "kb.propose_claim",
        {"text": HOSTILE[-1], "evidence": [w["source"]], "entities": [ent]},
    )
    texts[cid] = HOSTILE[-1]
    w["evil"] = ent
    return w, pid, texts


def test_mermaid_labels_cannot_inject_directives_links_or_markup(
    hostile: Hostile, run_cli: Any
) -> None:
    kb, w, _, texts = hostile
    g = call(kb, "kb.graph", {"id": w["evil"], "depth": 1, "pending": True})
    assert set(texts) <= _ids(g)
    drawn = run_cli("graph", w["evil"], "--depth", "1", "--pending", cwd=kb.root)
    assert drawn.code == 0
    text = drawn.out
    assert text == mermaid(g)
    labels = _checked_mermaid(text)
    _real_mermaid(text, g, labels)
    for oid, original in texts.items():
        kind = "entity" if oid == w["evil"] else "claim"
        shown = labels[_name(g, oid)]
        words = " ".join(original.split())
        if len(f"{kind}: {words}") <= 60:
            assert shown.startswith(f"{kind}: {words}"), (shown, words)  # drawn faithfully
        else:  # cut, and says so
            assert shown.startswith(f"{kind}: {words[:50]}") and "\u2026" in shown
            assert len(shown.split(" (pending")[0]) <= 60
    # no text became syntax: no link, directive or second statement on any line
    assert "%%{" not in text and not re.search(r"^\s*click\b", text, re.M)
    assert not re.search(r"javascript:[^#]*\"", text)
    assert "```" not in mermaid_block(g)[3:-4]  # a fence inside cannot close the block


def test_dot_labels_are_escaped(hostile: Hostile, run_cli: Any) -> None:
    kb, w, _, texts = hostile
    drawn = run_cli("graph", w["evil"], "--depth", "1", "--pending", "--format", "dot", cwd=kb.root)
    assert drawn.code == 0
    g = call(kb, "kb.graph", {"id": w["evil"], "depth": 1, "pending": True})
    assert drawn.out == dot(g)
    string = r'"((?:[^"\\\n]|\\.)*)"'
    node = re.compile(
        rf"^  (n\d+) \[label={string}, shape=\w+(, style=dashed)?"
        r"(, color=darkorange, penwidth=3)?\];$"
    )
    edge = re.compile(rf"^  n\d+ -> n\d+ \[label={string}(, style=dashed)?\];$")
    lines = drawn.out.splitlines()
    assert lines[0] == "digraph vouch {" and lines[-1] == "}"
    labels = {}
    for line in lines[1:-1]:
        found = node.match(line)
        if found:
            labels[found.group(1)] = re.sub(r"\\(.)", r"\1", found.group(2))
            continue
        assert edge.match(line) or line.startswith(("  rankdir", "  node [", "  edge [")), line
    assert not g["truncated"]
    for oid, original in texts.items():
        words = " ".join(original.split())
        if len(f"claim: {words}") <= 60:
            assert labels[_name(g, oid)].split(": ", 1)[1].startswith(words)
    if shutil.which("dot"):  # Graphviz, where installed, reads it as one node per object
        svg = subprocess.run(["dot", "-Tsvg"], input=drawn.out, capture_output=True, text=True)
        assert svg.returncode == 0, svg.stderr
        assert svg.stdout.count('class="node"') == len(g["nodes"])


# -- vouch diff --format markdown draws what a range adds --------------------------------------
def test_diff_markdown_embeds_what_the_range_adds(world: World, run_cli: Any) -> None:
    kb, w = world
    pid, claim = _proposed(
        kb,
        "kb.propose_claim",
        {
            "text": '"]; click n0 href "javascript:x" [a](https://evil.example) <img src=x>',
            "evidence": [w["source"]],
            "entities": [w["api"]],
        },
    )
    ref = next(b for b in branches(kb.root) if b.endswith(pid))
    before = _refs_and_tree(kb.root)
    md = run_cli("diff", f"HEAD...{ref}", "--format", "markdown", cwd=kb.root)
    assert md.code == 0, md.err
    # the list of claims added is inert markdown too: no live link, image or HTML
    assert "](https" not in md.out and "<img" not in md.out
    block = re.search(r"^```mermaid\n(.*?)^```$", md.out, re.M | re.S)
    assert block is not None
    labels = _checked_mermaid(block.group(1))
    g = call(kb, "kb.diff", {"revisions": f"HEAD...{ref}", "graph": True})["graph"]
    assert _ids(g) >= {claim, w["source"], w["api"]}  # the claim and its neighbours
    assert next(n for n in g["nodes"] if n["id"] == claim)["changed"] is True
    assert labels[_name(g, claim)].startswith('claim: "]; click')
    _real_mermaid(block.group(1), g, labels)
    assert re.search(rf"^  class {_name(g, claim)} changed$", block.group(1), re.M)
    plain = call(kb, "kb.diff", {"revisions": f"HEAD...{ref}"})
    assert "graph" not in plain  # only when asked: the JSON is as it was
    assert _refs_and_tree(kb.root) == before


def test_a_wide_range_draws_its_first_changes_with_context_and_counts_the_rest(
    world: World, run_cli: Any
) -> None:
    """70 claims added in one commit (built with git plumbing): the picture keeps its
    cap, the first changes with their neighbours, and says how many it left out."""
    from vouch.kinds import claim

    kb, w = world
    env = {"GIT_INDEX_FILE": str(kb.root / ".git" / "wide.index")}
    git_env = {**os.environ, **env}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=kb.root, env=git_env, check=True)
    for n in range(70):
        obj = claim.new(
            text=f"Payments shard {n} retries {n % 5} times",
            evidence=[w["source"]],
            entities=[w["api"]],
            proposed_by="bench",
        )
        sha = (
            subprocess.run(
                ["git", "hash-object", "-w", "--stdin"],
                cwd=kb.root,
                input=claim.dump(obj).encode(),
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )
        path = kb.rel(claim.path_for(obj["id"]))
        subprocess.run(
            ["git", "update-index", "--add", "--cacheinfo", f"100644,{sha},{path}"],
            cwd=kb.root,
            env=git_env,
            check=True,
        )
    tree = (
        subprocess.run(
            ["git", "write-tree"], cwd=kb.root, env=git_env, capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )
    commit = git(kb.root, "commit-tree", tree, "-p", "HEAD", "-m", "wide").strip()
    before = _refs_and_tree(kb.root)

    g = call(kb, "kb.diff", {"revisions": f"HEAD..{commit}", "graph": True})["graph"]
    assert len(g["nodes"]) == 60 and g["truncated"]
    assert {w["source"], w["api"]} <= _ids(g)  # the context of the first changes
    changed = [n for n in g["nodes"] if n.get("changed")]
    assert 20 <= len(changed) < 60
    # the neighbours come before the other changes; only changes are left out
    assert g["omitted"]["nodes"] == {"claim": 70 - len(changed)}
    assert g["omitted"]["more_edges"] is True  # the unread changes' edges: not counted
    md = run_cli("diff", f"HEAD..{commit}", "--format", "markdown", cwd=kb.root)
    block = re.search(r"^```mermaid\n(.*?)^```$", md.out, re.M | re.S)
    assert block is not None and "not shown: " in block.group(1)
    assert re.search(r"not shown: \d+ claims, \d+\+ edges", block.group(1))
    _checked_mermaid(block.group(1))
    assert _refs_and_tree(kb.root) == before
