"""Hostile text: bytes that are not UTF-8, control characters.

Python hands bytes that are not UTF-8 (argv, file names, JSON "\\udcff") over as lone
surrogates. YAML cannot hold them: a file written with one does not load again, so one
bad argument used to break `vouch list` for good. A NUL in a claim's text used to reach
the proposal's commit message and hide the proposal from `vouch pending`.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

import pytest
from conftest import git
from gate_support import a_source, call, propose_claim, proposed
from hypothesis import given, settings
from hypothesis import strategies as st

from vouch.core import yamlio
from vouch.errors import ValidationFailed
from vouch.kinds import claim, entity, page, source
from vouch.store.kb import KB

BAD = b"bad \xff byte".decode("utf-8", "surrogateescape")


def test_bad_bytes_in_a_proposal_are_a_usage_error(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    head = git(kb.root, "rev-parse", "HEAD")
    refs = git(kb.root, "for-each-ref")
    res = run_cli("propose-claim", "--text", BAD, "--source", a_source(kb), cwd=kb.root)
    assert res.code == 1 and "E100" in res.err and "not UTF-8" in res.err
    res = run_cli(
        "call", "kb.propose_entity", '{"name": "x \\udcff", "type": "system"}', cwd=kb.root
    )
    assert res.code == 1 and res.json()["error"]["code"] == "E100"
    assert git(kb.root, "rev-parse", "HEAD") == head
    assert git(kb.root, "for-each-ref") == refs


def test_bad_bytes_in_a_decision_or_actor_change_nothing(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb)
    head = git(kb.root, "rev-parse", "HEAD")
    for args in (
        ["approve", pid, "--as", "bob", "--reason", BAD],
        ["approve", pid, "--as", BAD],
        ["reject", pid, "--as", "bob", "--reason", BAD],
    ):
        res = run_cli(*args, cwd=kb.root)
        assert res.code == 1 and "E100" in res.err, (args, res.err)
    assert git(kb.root, "rev-parse", "HEAD") == head
    assert [p["proposal_id"] for p in call(kb, "kb.list_pending")] == [pid]
    assert run_cli("audit", "--verify", cwd=kb.root).code == 0


def test_kinds_refuse_to_write_what_they_could_not_load() -> None:
    with pytest.raises(ValidationFailed, match="not UTF-8"):
        entity.KIND.new(name=BAD, type="system")
    with pytest.raises(ValidationFailed, match="not UTF-8"):
        source.new(b"x\n", type="file", locator="l", metadata={"k": [BAD]})


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file names must be UTF-8")
def test_a_file_name_that_is_not_utf8_still_registers(kb: KB, run_cli, tmp_path: Path) -> None:
    folder = kb.root / "docs"
    folder.mkdir()
    odd = os.fsdecode(b"caf\xe9.txt")  # latin-1 name
    (folder / odd).write_text("odd name\n")
    (folder / "plain.txt").write_text("plain\n")
    res = run_cli("source", "add", str(folder), "--recursive", "--json", cwd=kb.root)
    assert res.code == 0, res.err
    assert run_cli("source", "add", str(folder / odd), cwd=kb.root).code == 0
    listed = run_cli("list", "sources", "--json", cwd=kb.root)
    assert listed.code == 0, listed.err
    assert sorted(s["title"] for s in listed.json()["items"]) == ["caf\ufffd.txt", "plain.txt"]


def test_control_characters_do_not_hide_a_proposal(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    text = "nul\x00 soh\x01 esc\x1b[31m red"
    pid = propose_claim(kb, text=text, rationale="why\x00\x01 not")
    assert [p["proposal_id"] for p in call(kb, "kb.list_pending")] == [pid]
    shown = run_cli("show", pid, "--json", cwd=kb.root)
    assert shown.code == 0, shown.err
    assert run_cli("approve", pid, "--as", "bob", cwd=kb.root).code == 0
    claim = call(kb, "kb.list_claims")[0]
    assert claim["text"] == text  # the knowledge itself is kept as given
    assert "\x00" not in git(kb.root, "log", "-1", "--format=%B", "HEAD^2")
    assert run_cli("audit", "--verify", cwd=kb.root).code == 0


LINE_BREAKS = "step one\x85step two\u2028three\u2029four"


def test_unicode_line_breaks_are_kept_exactly(kb_with_sources: KB, run_cli) -> None:
    """YAML reads NEL (U+0085) as a line break: written in a single-quoted scalar it came
    back as a space, so the claim's text changed, its id no longer matched it and approve
    refused the proposal forever. Now it is written escaped (`\\N`) and kept as given."""
    kb = kb_with_sources
    pid = propose_claim(kb, text=LINE_BREAKS, rationale="a\x85b")
    assert run_cli("show", pid, "--json", cwd=kb.root).code == 0
    res = run_cli("approve", pid, "--as", "bob", cwd=kb.root)
    assert res.code == 0, res.err
    claim = call(kb, "kb.list_claims")[0]
    assert claim["text"] == LINE_BREAKS
    assert run_cli("lint", cwd=kb.root).code == 0
    assert run_cli("audit", "--verify", cwd=kb.root).code == 0


def test_a_page_whose_body_opens_with_blank_lines_can_be_approved(
    kb_with_sources: KB, run_cli
) -> None:
    """A body opening with a line of spaces was written as given, but the frontmatter
    reader drops such lines: the file read back was not what vouch writes, and approve
    refused the page forever."""
    kb = kb_with_sources
    body = " \t\n\u3000\n  Deploys roll back with `ship undo`.\n"
    made = proposed(kb, "kb.propose_page", {"title": "Rollbacks", "body": body})
    res = run_cli("approve", made["proposal_id"], "--as", "bob", cwd=kb.root)
    assert res.code == 0, res.err
    page_obj = call(kb, "kb.read_page", {"id": made["page_id"]})
    assert page_obj["body"] == "  Deploys roll back with `ship undo`."
    assert run_cli("lint", cwd=kb.root).code == 0


_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            *"ab -:#'\"\\{}[]&*!|>%@`,?~0.",
            "\n",
            "\r",
            "\t",
            "\x00",
            "\x7f",
            "\x85",
            "\u2028",
            "\u2029",
            "\ufeff",
            "\u00a0",
            "é",
            "😀",
            "\u0301",
        ]
    ),
    min_size=1,
    max_size=16,
).filter(lambda t: t.strip())


@settings(max_examples=150, deadline=None)
@given(text=_TEXT, other=_TEXT)
def test_every_kind_reads_back_what_it_wrote(text: str, other: str) -> None:
    """Whatever text a person or an agent gives, the file vouch writes loads as the same
    object with the same id (else approve would refuse it as rewritten)."""
    made = [
        (claim.KIND, claim.KIND.new(text=text, type="fact", tags=[other])),
        (
            entity.KIND,
            entity.KIND.new(name=text, type="system", aliases=[other], description=other),
        ),
        (page.KIND, page.KIND.new(title=text, type="concept", body=other)),
    ]
    for kind, obj in made:
        back = kind.load(kind.dump(obj), where="hostile")
        assert kind.make_id(back) == obj["id"], (kind.name, obj)
        for key, value in obj.items():
            if key != "body":
                assert back[key] == value, (kind.name, key)
        assert kind.dump(back) == kind.dump(obj)
    # a page's body edited in place reads back as written, too
    written = page.KIND.edit(page.KIND.dump(made[2][1]), {"body": text})
    assert page.KIND.load(written, where="edited")["body"] == yamlio.markdown_body(text)


# Two spaces between sentences, in a claim longer than ruamel's line width (4096): the
# line was folded just after a run of spaces, and a fold reads back as one space.
LONG_TEXT = "The " + "Deploys need a green CI run.  " * 139 + "Deploys need a green CI run."


def test_long_text_folded_at_a_run_of_spaces_is_kept_exactly(kb_with_sources: KB, run_cli) -> None:
    """The claim's file read back with one space where there were two: its text was not
    what was proposed, and approve refused the proposal forever."""
    kb = kb_with_sources
    pid = propose_claim(kb, text=LONG_TEXT)
    res = run_cli("approve", pid, "--as", "bob", cwd=kb.root)
    assert res.code == 0, res.err
    assert [c["text"] for c in call(kb, "kb.list_claims")] == [LONG_TEXT]
    assert run_cli("lint", cwd=kb.root).code == 0


def test_long_lines_read_back_exactly_in_every_style() -> None:
    """Seeded lines past ruamel's width, of words and runs of spaces, tabs or line
    breaks, opening so that ruamel writes them plain, single- or double-quoted: written,
    edited in and edited around, each reads back exactly, and re-dumps to its bytes."""
    rng = random.Random(4096)
    heads = ["", "The ", "- ", "'", "#", "yes ", "a: ", "é", "a\x85", "\x01", "\t"]
    gaps = [" ", "  ", "   ", "\t", " \n ", "\n", "\u3000"]
    for _ in range(40):
        text, pair = rng.choice(heads), rng.sample(gaps, 2)
        while len(text) < 4200:
            text += "w" * rng.choice([1, 3, 8, 30, 700]) + rng.choice(pair)
        data = {"text": text + "end"}
        written = yamlio.dump_yaml(data)
        assert yamlio.load_yaml(written) == data, (text[:8], pair)
        assert yamlio.dump_yaml(yamlio.load_yaml(written)) == written
        edited = yamlio.edit_yaml(written, {"other": "x"})
        assert yamlio.load_yaml(edited) == {**data, "other": "x"}, (text[:8], pair)
        edited_in = yamlio.edit_yaml(yamlio.dump_yaml({"text": "old"}), data)
        assert edited_in == written


def test_a_query_repeating_a_word_over_text_repeating_it_answers_quickly(
    kb_with_sources: KB, run_cli
) -> None:
    """FTS5's snippet() grows with the square of its phrase matches: fifty copies of a
    word against a claim holding it a thousand times kept `vouch search` busy for
    minutes. The snippet query takes each word once."""
    kb = kb_with_sources
    pid = propose_claim(kb, text="Deploy " + "word " * 1000)
    assert run_cli("approve", pid, "--as", "bob", cwd=kb.root).code == 0
    call(kb, "kb.search", {"query": "word"})  # builds the index
    started = time.monotonic()
    hits = call(kb, "kb.search", {"query": "word " * 50 + "WORD"})
    assert time.monotonic() - started < 10
    assert "[MATCH]word[/MATCH]" in json.dumps(hits)
    # the same word written fifty ways is still one word to FTS5
    started = time.monotonic()
    hits = call(kb, "kb.search", {"query": " ".join("word" + "," * n for n in range(50))})
    assert time.monotonic() - started < 10
    assert "[MATCH]word[/MATCH]" in json.dumps(hits)


def test_a_file_name_cannot_add_lines_to_what_people_read(kb: KB, run_cli) -> None:
    """A stray file whose name holds a newline and an escape sequence: lint and doctor
    show the name escaped on its one line; the JSON holds it exactly."""
    name = "bad\nINJECTED: all is well\x1b[2J.yaml"
    stray = kb.dir / "claims" / "ab" / name
    stray.parent.mkdir(parents=True)
    stray.write_text("x: 1\n")
    git(kb.root, "add", "-A")
    git(kb.root, "commit", "-qm", "a stray file")
    shown = run_cli("lint", cwd=kb.root).out
    assert "ab/bad\\nINJECTED" in shown and "\\x1b[2J" in shown
    assert not any(line.startswith("INJECTED") for line in shown.splitlines())
    assert "\x1b" not in run_cli("doctor", cwd=kb.root).out
    issues = run_cli("lint", "--json", cwd=kb.root).json()["issues"]
    assert any(i["path"].endswith("claims/ab/" + name) for i in issues)


ESCAPES = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[1A\x1b[2K\x9b31m\x7f"  # clipboard, erase, C1


def test_escape_sequences_in_knowledge_never_reach_the_terminal(
    kb_with_sources: KB, run_cli
) -> None:
    """A source and a proposed claim holding terminal escape sequences (set the
    clipboard, clear the screen, erase the line above): every human view — search,
    list, show, the review screen, an error quoting it — shows them as escapes; the
    JSON and the stored knowledge keep them exactly."""
    kb = kb_with_sources
    (kb.root / "evil.md").write_text(f"# Quokka {ESCAPES}guide\n\nQuokka rollback {ESCAPES}\n")
    assert run_cli("source", "add", "evil.md", cwd=kb.root).code == 0
    pid = propose_claim(kb, text=f"Quokka rollback {ESCAPES} with the script")
    views = [
        run_cli("search", "quokka", "--format", "human", cwd=kb.root),
        run_cli("search", "quokka", "--include-pending", "--format", "human", cwd=kb.root),
        run_cli("list", "sources", "--format", "human", cwd=kb.root),
        run_cli("show", pid, cwd=kb.root),
        run_cli("show", pid, "--format", "markdown", cwd=kb.root),
        run_cli("pending", "--format", "human", cwd=kb.root),
    ]
    for res in views:
        assert res.code == 0, res.err
        assert not any(c in res.out + res.err for c in "\x1b\x07\x9b\x7f"), res.out
    assert "\\x1b[2J" in views[0].out + views[1].out
    assert "\\x1b[2J" in views[3].out
    found = run_cli("search", "quokka", "--include-pending", "--json", cwd=kb.root)
    hits = found.json()
    assert any(ESCAPES in h["text"] for h in hits["results"])  # JSON: exact
    # ... and still safe on a terminal: JSON leaves DEL and C1 controls raw (U+009B is
    # ESC [ to many terminals); they come as \u escapes
    assert not any(c in found.out for c in "\x1b\x07\x9b\x7f") and "\\u009b31m" in found.out
    bad = run_cli("show", f"nothing{ESCAPES}", "--json", cwd=kb.root)
    assert bad.code == 1 and not any(c in bad.out for c in "\x1b\x9b\x7f"), bad.out
    assert "nothing" in json.loads(bad.out)["error"]["message"]
    missing = run_cli("show", f"nothing{ESCAPES}", cwd=kb.root)
    assert missing.code == 1 and "\x1b" not in missing.err and "\\x1b" in missing.err


def test_json_for_a_terminal_reads_back_the_same() -> None:
    """`json_screen` escapes what JSON leaves raw but a terminal acts on (DEL, C1, a
    bidirectional override, an astral tag character) and keeps printable text, non-ASCII
    included: the JSON decodes to the same values."""
    from vouch.cli.oneline import json_screen

    value = {"t": "naïve 東京 \x7f\x85\x9b31m \u202egnp.exe \U000e0041 é\n", "n": [1, "\x1b"]}
    raw = json.dumps(value, ensure_ascii=False, indent=2)
    shown = json_screen(raw)
    assert json.loads(shown) == value
    assert not any(c in shown for c in "\x7f\x85\x9b\u202e\U000e0041")
    assert "naïve 東京" in shown and "\\u202e" in shown and "\\udb40\\udc41" in shown
