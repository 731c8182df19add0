"""One validated read path: `vouch show`, the index and the gate read a knowledge file
through the same function (`Kind.load`), so a file one of them rejects is never indexed
as if valid — it is left out with a warning naming it and why, counted by
`vouch index status` and `vouch status`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from hypothesis import given, settings
from hypothesis import strategies as st
from index_support import claim, commit, write

from vouch.core import fastyaml
from vouch.errors import CorruptFile
from vouch.index import build
from vouch.kinds import KINDS, base
from vouch.store.kb import KB, path_for

BAD = {  # how each hand-written claim breaks, and what its reason must say
    "bogus": ("status: working", "status: bogus", "status 'bogus' is not one of"),
    "confidence": ("confidence: 0.7", "confidence: 5", "confidence 5 is out of range"),
    "unknown": ("scope: project", "scope: project\nmood: happy", "unknown field 'mood'"),
    "yaml": ("scope: project", "scope: [project", "cannot parse"),
}


def _bad_claims(kb: KB) -> dict[str, tuple[str, str]]:
    """Claim files a person broke by hand: {case: (id, repository path)}."""
    made = {}
    for case, (old, new, _) in BAD.items():
        obj = claim(kb, f"Zebra crossings need {case} paint")
        path = kb.dir / path_for(KINDS["claim"], obj["id"])
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))
        made[case] = (obj["id"], kb.rel(path_for(KINDS["claim"], obj["id"])))
    return made


def _search_ids(run_cli: Any, kb: KB, query: str) -> list[str]:
    found = run_cli("search", query, "--kb", str(kb.root), "--json", "--top", "50")
    assert found.code == 0, found.err
    return [r["source"]["document_id"] for r in found.json()["results"]]


def _warned(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The index's warnings since the last call (a `vouch` process prints them to
    stderr; in-process, pytest's log capture takes them)."""
    found = [
        r.getMessage()
        for r in caplog.records
        if r.name == "vouch.index" and r.levelname == "WARNING"
    ]
    caplog.clear()
    return found


def _check_reported(run_cli: Any, kb: KB, made: dict[str, tuple[str, str]]) -> None:
    status = run_cli("index", "status", "--kb", str(kb.root), "--json").json()
    assert status["invalid_files"] == len(made)
    reasons = {i["path"]: i["reason"] for i in status["invalid"]}
    for case, (_, path) in made.items():
        assert BAD[case][2] in reasons[path] and path in reasons[path], (case, reasons)
    top = run_cli("status", "--kb", str(kb.root), "--json").json()
    assert top["invalid_files"] == len(made)
    human = run_cli("status", "--kb", str(kb.root), "--format", "human")
    assert f"Invalid knowledge files (not indexed): {len(made)}" in human.out


def test_hand_committed_invalid_claims_are_left_out_reported_and_counted(
    kb: KB, run_cli: Any, caplog: pytest.LogCaptureFixture
) -> None:
    good = claim(kb, "Zebra crossings need fresh paint every spring")
    commit(kb)
    assert run_cli("index", "rebuild", "--kb", str(kb.root), "--json").code == 0
    made = _bad_claims(kb)
    git(kb.root, "add", "-A", ".vouch")  # committed by hand, past the gate
    git(kb.root, "commit", "-qm", "hand edits")

    # what `vouch show` rejects ...
    for case, (oid, _) in made.items():
        shown = run_cli("show", oid, "--kb", str(kb.root), "--json")
        assert shown.code == 2 and BAD[case][2] in shown.json()["error"]["message"], case

    # ... the incremental refresh (started by a search) leaves out, naming each file
    assert _search_ids(run_cli, kb, "zebra crossings paint") == [good["id"]]
    warned = _warned(caplog)
    for case, (_, path) in made.items():
        assert any(
            w.startswith("not indexed: ") and path in w and BAD[case][2] in w for w in warned
        ), (case, warned)
    _check_reported(run_cli, kb, made)

    # and so does a full rebuild, in a `vouch` process as a user runs it
    rebuilt = subprocess.run(
        [sys.executable, "-m", "vouch", "index", "rebuild", "--json"],
        cwd=kb.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert rebuilt.returncode == 0 and json.loads(rebuilt.stdout)["documents"] == 1
    assert sorted(i["path"] for i in json.loads(rebuilt.stdout)["invalid"]) == sorted(
        p for _, p in made.values()
    )
    for case, (_, path) in made.items():
        assert path in rebuilt.stderr and BAD[case][2] in rebuilt.stderr, case
    assert _search_ids(run_cli, kb, "zebra crossings paint") == [good["id"]]
    _check_reported(run_cli, kb, made)

    # a file mended or removed leaves the report at the next refresh; the rest stay
    oid, path = made.pop("bogus")
    file = kb.root / path
    file.write_text(file.read_text().replace("status: bogus", "status: stable"))
    gone = made.pop("yaml")[1]
    (kb.root / gone).unlink()
    ids = _search_ids(run_cli, kb, "zebra crossings paint")
    assert sorted(ids) == sorted([good["id"], oid])
    _check_reported(run_cli, kb, made)


def test_a_file_whose_id_is_not_its_path_is_invalid(kb: KB, run_cli: Any) -> None:
    one = claim(kb, "Backups run nightly at two")
    other = KINDS["claim"].new(text="Backups are kept for thirty days", evidence=["a" * 64])
    (kb.dir / path_for(KINDS["claim"], one["id"])).write_text(KINDS["claim"].dump(other))
    commit(kb)
    with pytest.raises(Exception, match="its path names"):
        kb.read(KINDS["claim"], one["id"])
    stray = kb.dir / "claims" / "ab" / "Meeting Notes.yaml"  # a name that is no id
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_text("text: notes\n")
    commit(kb)
    rebuilt = run_cli("index", "rebuild", "--kb", str(kb.root), "--json").json()
    reasons = sorted(i["reason"] for i in rebuilt["invalid"])
    assert rebuilt["documents"] == 0 and len(reasons) == 2
    assert "its path names" in reasons[0] and "'Meeting Notes' is not a vouch id" in reasons[1]


def _broken_pdf(kb: KB, run_cli: Any, name: str) -> tuple[str, str]:
    pdf = kb.root / name
    pdf.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 3 + f"\n{name}: not a PDF\n".encode())
    added = run_cli("source", "add", name, "--kb", str(kb.root), "--json")
    assert added.code == 0, added.err
    sid = added.json()["id"]
    return sid, kb.rel(f"sources/{sid[:2]}/{sid}/content.pdf")


def test_a_pdf_that_cannot_be_extracted_is_reported_not_swallowed(
    kb: KB, run_cli: Any, caplog: pytest.LogCaptureFixture
) -> None:
    sid, content = _broken_pdf(kb, run_cli, "broken-manual.pdf")
    rebuilt = run_cli("index", "rebuild", "--kb", str(kb.root), "--json")
    assert rebuilt.code == 0
    (entry,) = rebuilt.json()["invalid"]
    assert entry["path"] == content and "pypdf cannot read it" in entry["reason"]
    assert any(content in w and "pypdf cannot read it" in w for w in _warned(caplog))
    # still findable by its title and locator, and counted
    assert sid in _search_ids(run_cli, kb, "broken manual")
    status = run_cli("index", "status", "--kb", str(kb.root), "--json").json()
    assert status["invalid_files"] == 1 and status["invalid"][0]["path"] == content
    assert run_cli("status", "--kb", str(kb.root), "--json").json()["invalid_files"] == 1
    # a refresh that meets another one reports both
    _, second = _broken_pdf(kb, run_cli, "broken-guide.pdf")
    _search_ids(run_cli, kb, "broken guide")
    assert any(second in w for w in _warned(caplog))
    status = run_cli("index", "status", "--kb", str(kb.root), "--json").json()
    assert sorted(i["path"] for i in status["invalid"]) == sorted([content, second])


def test_a_damaged_pdf_prints_nothing_of_pypdfs_own(kb: KB, run_cli: Any) -> None:
    """pypdf logs what it finds wrong through `logging`, which with no handler prints on
    stderr: "EOF marker not found" in the middle of a search's output. vouch reports the
    file itself (the test above); the library says nothing."""
    _broken_pdf(kb, run_cli, "broken-notes.pdf")
    for args in (["index", "rebuild"], ["search", "broken notes", "--format", "human"]):
        done = subprocess.run(
            [sys.executable, "-m", "vouch", *args], cwd=kb.root, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert "EOF marker" not in done.stderr and "pdf header" not in done.stderr, done.stderr


def test_the_index_reads_the_same_objects_whichever_parser_answers(
    kb: KB, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vouch.store import sources

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha text.\n\n## B\n\nBeta: 'quoted' #x\n")
    (docs / "b.txt").write_text("plain words\n\nsecond paragraph\n")
    items = [sources.intake_for_path(kb, p, tags=["docs"]) for p in sorted(docs.iterdir())]
    sources.register_many(kb, items, "Test Person")
    person = write(
        kb,
        "entity",
        name="Ada Lovelace",
        type="person",
        aliases=["Ada"],
        description="wrote the first program",
    )
    tool = write(kb, "entity", name="Engine", type="tool")
    write(kb, "relation", source=person["id"], relation="uses", target=tool["id"])
    claim(kb, "It's 50% done: see #42", tags=["x", "y"], type="fact", confidence=0.25)
    write(
        kb,
        "page",
        title="Guide: setup",
        tags=["ops"],
        body="Intro.\n\n# Install\n\nRun it.\n\n---\n\n## Tail\n\nEnd.\n",
    )
    commit(kb)
    labels = {person["id"]: "Ada Lovelace", tool["id"]: "Engine"}
    wanted = [
        (kind, oid)
        for kind in ("entity", "relation", "claim", "page", "source")
        for oid in kb.ids(KINDS[kind])
    ]
    fast = {key: build.read_doc(kb, *key, labels) for key in wanted}
    objects = {key: kb.read(KINDS[key[0]], key[1]) for key in wanted}
    monkeypatch.setattr(fastyaml, "parse", lambda text: None)  # PyYAML answers everything
    assert {key: build.read_doc(kb, *key, labels) for key in wanted} == fast
    assert {key: kb.read(KINDS[key[0]], key[1]) for key in wanted} == objects
    assert len(wanted) == 7 and all(fast.values())


def test_values_past_the_usual_get_the_full_check() -> None:
    kind = KINDS["claim"]
    text = kind.dump(kind.new(text="Huge numbers are refused", evidence=["a" * 64]))
    for value, reason in (
        ("1" + "0" * 400, "out of range"),
        (".nan", "must be a number"),
        ("true", "must be a number"),
        ("-0.5", "out of range"),
    ):
        with pytest.raises(CorruptFile, match=reason):
            kind.load(text.replace("confidence: 0.7", f"confidence: {value}"))
    with pytest.raises(CorruptFile, match="not a vouch id"):
        kind.load(text.replace("  - " + "a" * 64, "  - ../etc"))
    assert kind.load(text.replace("Huge numbers", "Énorme numbers"))["text"].startswith("É")


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**400)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            " ",
            "a" * 64,
            "ship-tool-1234abcd",
            "working",
            "fact",
            "É",
            "2025-01-01T00:00:00Z",
            "\udc80",
        ]
    ),
    st.lists(
        st.one_of(
            st.text(max_size=6), st.sampled_from(["a" * 64, "x-1234abcd", ""]), st.integers()
        ),
        max_size=3,
    ),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
)


@settings(max_examples=600, deadline=None)
@given(st.sampled_from([f for k in KINDS.values() for f in k.fields]), VALUES)
def test_the_usual_value_shortcut_only_passes_what_the_full_check_passes(
    field: Any, value: Any
) -> None:
    if value is not None and base._usual_value(field)(value):
        assert base._check_value(field, value) == []
