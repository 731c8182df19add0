"""What a reviewer sees (issue 15): the review screen with the cited text, pending ids
that resolve, a source's lines, a proposal as a pull-request description, sources'
content files with their extension (and older ones without), and `vouch review` driven
through a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import ALICE, BOB, PERSON, call, proposed
from history_support import RUNBOOK

from vouch.kinds import source as source_kind
from vouch.store.kb import KB


@pytest.fixture
def runbook(kb: KB) -> str:
    (kb.root / "runbook.md").write_text(RUNBOOK)
    return str(call(kb, "kb.register_source_from_path", {"path": "runbook.md"})["id"])


def _propose(kb: KB, text: str, evidence: list[str], **extra: Any) -> dict[str, Any]:
    result = proposed(kb, "kb.propose_claim", {"text": text, "evidence": evidence, **extra})
    assert result["valid"], result
    return result


def _rows(citation: dict[str, Any]) -> list[tuple[int, str, bool]]:
    return [(r["n"], r["text"], r["cited"]) for r in citation["excerpt"]]


# -- the review screen --------------------------------------------------------------------------
def test_the_screen_shows_the_cited_lines_of_a_span_with_context(kb: KB, runbook: str) -> None:
    made = _propose(
        kb, "Deploys need a green CI run", [f"{runbook}:L7-L8"], rationale="see the runbook"
    )
    screen = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    assert screen["proposer"] == ALICE and screen["rationale"] == "see the runbook"
    [c] = screen["citations"]
    assert c["kind"] == "evidence" and c["title"] == "runbook.md" and c["locator"] == "L7-L8"
    assert c["lines"] == {"start": 7, "end": 8}
    lines = RUNBOOK.split("\n")
    assert _rows(c) == [(n, lines[n - 1], n in (7, 8)) for n in range(5, 11)]


def test_the_screen_finds_a_quote_in_the_source(kb: KB, runbook: str) -> None:
    ev = call(
        kb,
        "kb.register_evidence",
        {"source_id": runbook, "locator": "#deploy", "quote": "whatever the release manager"},
    )["id"]
    made = _propose(kb, "Never deploy on Fridays", [ev, runbook])
    screen = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    quoted, whole = screen["citations"]
    assert quoted["quote"] == "whatever the release manager" and quoted["locator"] == "#deploy"
    assert quoted["lines"] == {"start": 8, "end": 9}
    assert [r["n"] for r in quoted["excerpt"] if r["cited"]] == [8, 9]
    assert whole["kind"] == "source" and whole["locator"] is None
    assert [r["n"] for r in whole["excerpt"]][:5] == [1, 2, 3, 4, 5]


def test_the_screen_names_approved_look_alikes(kb: KB, runbook: str) -> None:
    first = _propose(kb, "Deploys need a green CI run", [runbook])
    call(kb, "kb.approve", {"proposal_id": first["proposal_id"]}, actor=BOB)
    again = _propose(kb, "Deploys need a green CI run first", [runbook])
    screen = call(kb, "kb.read_proposal", {"id": again["proposal_id"]})
    assert screen["related"][0]["id"] == first["claim_id"]
    assert all(r["id"] != again["claim_id"] for r in screen["related"])


def test_show_prints_the_screen_and_markdown(kb: KB, runbook: str, run_cli: Any) -> None:
    made = _propose(kb, "Deploys need a green CI run", [f"{runbook}:L7-L8"])
    pid = made["proposal_id"]
    res = run_cli("show", pid, cwd=kb.root)
    assert res.code == 0, res.err
    assert "runbook.md:L7-L8 (evidence evidence-" in res.out  # the path, as --source takes it
    assert " 7 > Deploys need a green CI run." in res.out and " 6   " in res.out
    assert f"vouch approve {pid} --expect" in res.out
    # showing pins the reviewed commit, as before
    assert git(kb.root, "rev-parse", f"refs/vouch/reviewed/{pid}").strip()
    md = run_cli("show", pid, "--format", "markdown", cwd=kb.root)
    assert md.code == 0, md.err
    assert md.out.startswith(f"## vouch proposal `{pid}`: claim")
    assert "### Evidence (1)" in md.out and "**1. `runbook.md:L7-L8`**" in md.out
    assert "```text\n 5   ## Deploy" in md.out and "```diff" in md.out
    same = run_cli("read", "proposal", pid, "--format", "markdown", cwd=kb.root)
    assert same.out == md.out


def test_pending_ids_resolve_in_show(kb: KB, runbook: str, run_cli: Any) -> None:
    made = _propose(kb, "Deploys need a green CI run", [f"{runbook}:L7-L8"])
    screen = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    evidence_id = screen["object"]["evidence"][0]
    res = run_cli("show", evidence_id, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    shown = res.json()
    assert shown["kind"] == "evidence" and shown["pending_in"] == made["proposal_id"]
    assert shown["locator"] == "L7-L8"
    claim = run_cli("show", made["claim_id"], "--json", cwd=kb.root).json()
    assert claim["kind"] == "claim" and claim["pending_in"] == made["proposal_id"]
    missing = run_cli("show", "evidence-0badc0de", cwd=kb.root)
    assert missing.code == 1 and "no object" in missing.err


def test_show_source_content_and_lines(kb: KB, runbook: str, run_cli: Any) -> None:
    res = run_cli("show", runbook, "--content", cwd=kb.root)
    assert res.code == 0 and res.out == RUNBOOK
    res = run_cli("show", runbook, "--content", "--lines", "7-8", cwd=kb.root)
    assert res.out == "7  Deploys need a green CI run.\n8  Never deploy on Fridays, whatever\n"
    data = run_cli("show", runbook, "--content", "--lines", "L12", "--json", cwd=kb.root).json()
    assert data["text"] == "## Other" and data["lines"] == {"start": 12, "end": 12, "total": 14}
    for bad in (("--lines", "9-3"), ("--lines", "99"), ("--lines", "x")):
        res = run_cli("show", runbook, "--content", *bad, cwd=kb.root)
        assert res.code == 1 and "Traceback" not in res.err, bad
    res = run_cli("show", runbook, "--lines", "1-2", cwd=kb.root)
    assert res.code == 1 and "--content" in res.err
    res = run_cli("show", "claim-0badc0de", "--content", cwd=kb.root)
    assert res.code == 1


# -- content files keep their media type's extension ----------------------------------------------
def test_new_sources_keep_their_extension(kb: KB, runbook: str) -> None:
    folder = kb.dir / source_kind.directory_for(runbook)
    assert sorted(p.name for p in folder.iterdir()) == ["content.md", "meta.yaml"]
    assert source_kind.content_name("text/plain; charset=utf-8") == "content.txt"
    assert source_kind.content_name("application/x-unknown") == "content"
    tree = git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", str(folder))
    assert f"{runbook}/content.md" in tree


def test_an_older_content_file_without_extension_still_works(
    kb: KB, runbook: str, run_cli: Any
) -> None:
    """A knowledge base made before extensions: `content` is read wherever bytes are."""
    folder = kb.dir / source_kind.directory_for(runbook)
    git(kb.root, "mv", str(folder / "content.md"), str(folder / "content"))
    git(kb.root, "commit", "-qm", "an older layout")
    assert kb.source_content(runbook) == RUNBOOK.encode()
    verify = run_cli("source", "verify", "--json", cwd=kb.root)
    assert verify.code == 0 and verify.json()["ok"], verify.out
    made = _propose(kb, "Deploys need a green CI run", [f"{runbook}:L7-L8"])  # read in git
    screen = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    assert screen["problems"] == [] and screen["citations"][0]["lines"]["start"] == 7
    call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    res = run_cli("show", runbook, "--content", "--lines", "7", cwd=kb.root)
    assert res.out == "7  Deploys need a green CI run.\n"
    lint = run_cli("lint", "--json", cwd=kb.root)
    assert not [i for i in lint.json()["issues"] if i.get("severity") == "error"], lint.out


# -- vouch review on a terminal -------------------------------------------------------------------
PROMPT = b"[a,r,c,s,q,?]: "


class Terminal:
    """`vouch review` on a real pseudo-terminal: read until a prompt, type an answer."""

    def __init__(self, root: Path, *args: str):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vouch", "review", *args],
            cwd=root,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**os.environ, "COLUMNS": "120"},
            start_new_session=True,
        )
        os.close(slave)
        self.seen = b""

    def expect(self, marker: bytes, timeout: float = 60) -> bytes:
        start, deadline = len(self.seen), time.monotonic() + timeout
        while marker not in self.seen[start:]:
            ready, _, _ = select.select([self.master], [], [], max(0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"no {marker!r} on the terminal; saw {self.seen[-2000:]!r}")
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the other side closed
                chunk = b""
            if not chunk:
                raise AssertionError(f"ended before {marker!r}; saw {self.seen[-2000:]!r}")
            self.seen += chunk
        return self.seen[start:]

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")

    def finish(self) -> int:
        try:
            while True:
                ready, _, _ = select.select([self.master], [], [], 60)
                chunk = os.read(self.master, 65536) if ready else b""
                if not chunk:
                    break
                self.seen += chunk
        except OSError:
            pass
        os.close(self.master)
        return self.proc.wait(timeout=60)


def test_vouch_review_walks_the_queue_on_a_terminal(kb: KB, runbook: str) -> None:
    made = [
        (_propose(kb, "Deploys need a green CI run", [f"{runbook}:L7-L8"]), b"7 > Deploys need"),
        (_propose(kb, "Rollbacks never need a script", [f"{runbook}:L10"]), b"10 > Rollback with"),
        (_propose(kb, "Other holds nothing else", [f"{runbook}:L14"]), b"14 > nothing else"),
    ]
    made.sort(key=lambda m: m[0]["proposal_id"])  # the queue is in proposal id order
    (first, line1), (second, line2), (third, _) = made
    term = Terminal(kb.root, "--as", BOB)
    shown = term.expect(PROMPT)
    assert b"(1/3)" in shown and line1 in shown
    term.type("?")
    assert b"reject it" in term.expect(PROMPT)
    term.type("a")
    shown = term.expect(PROMPT)
    assert f"approved {first['proposal_id']}".encode() in shown
    assert b"(2/3)" in shown and line2 in shown
    term.type("r")
    term.expect(b"Reason for rejecting: ")
    term.type("the runbook says the opposite")
    shown = term.expect(PROMPT)
    assert f"rejected {second['proposal_id']}".encode() in shown and b"(3/3)" in shown
    term.type("q")
    assert term.finish() == 0
    assert b"1 approved, 1 rejected, 1 skipped" in term.seen

    why = call(kb, "kb.why", {"id": first["claim_id"]})
    # the terminal's person decides (`--as bob` is a label beside them)
    assert why["approved"]["approver"] == PERSON and why["proposed"]["proposer"] == ALICE
    decided = call(kb, "kb.read_proposal", {"id": second["proposal_id"]})
    assert decided["state"] == "rejected"
    assert decided["decision"]["reason"] == "the runbook says the opposite"
    pending = [p["proposal_id"] for p in call(kb, "kb.list_pending")]
    assert pending == [third["proposal_id"]]


def test_vouch_review_refuses_your_own_proposal_and_asks_again(kb: KB, runbook: str) -> None:
    made = _propose(kb, "Deploys need a green CI run", [runbook])
    term = Terminal(kb.root, "--as", ALICE)
    term.expect(PROMPT)
    term.type("a")
    shown = term.expect(PROMPT)
    assert b"cannot also approve" in shown
    term.type("s")
    assert term.finish() == 0 and b"0 approved, 0 rejected, 1 skipped" in term.seen
    assert [p["proposal_id"] for p in call(kb, "kb.list_pending")] == [made["proposal_id"]]


def test_review_without_a_terminal_is_refused_and_changes_nothing(
    kb: KB, runbook: str, run_cli: Any
) -> None:
    pending = run_cli("pending", "--json", cwd=kb.root).json()
    res = run_cli("review", "--json", cwd=kb.root)
    assert res.code == 1 and res.json()["error"]["code"] == "E100"
    assert "terminal" in res.json()["error"]["message"]
    assert run_cli("pending", "--json", cwd=kb.root).json() == pending


def test_vouch_review_decides_only_on_a_whole_answer(kb: KB, runbook: str) -> None:
    """Issue 34, finding 11: "abort" approved a proposal because only its first letter
    was read. Words that merely start like an answer, other words and an empty line
    decide nothing and ask again; `approve` and `a` alone approve."""
    made = sorted(
        (
            _propose(kb, "Deploys need a green CI run", [f"{runbook}:L7-L8"]),
            _propose(kb, "Rollbacks never need a script", [f"{runbook}:L10"]),
        ),
        key=lambda m: m["proposal_id"],
    )
    term = Terminal(kb.root, "--as", BOB)
    term.expect(PROMPT)
    before = git(kb.root, "for-each-ref")  # showing it pinned the commit shown
    for typed in ("abort", "apple", "rej", "REJECTED", "yes", "quitting", "sk", ""):
        term.type(typed)
        shown = term.expect(PROMPT)
        assert b"(2/2)" not in shown and b"Reason for rejecting" not in shown, typed
        assert b"nothing was decided" in shown or not typed, typed
        assert git(kb.root, "for-each-ref") == before, typed  # no ref moved
    term.type("approve")
    shown = term.expect(PROMPT)
    assert f"approved {made[0]['proposal_id']}".encode() in shown and b"(2/2)" in shown
    term.type("a")
    term.expect(b"approved " + made[1]["proposal_id"].encode())
    assert term.finish() == 0 and b"2 approved, 0 rejected, 0 skipped" in term.seen
    assert call(kb, "kb.list_pending") == []


def test_vouch_review_comments_without_deciding_and_quits_at_end_of_input(
    kb: KB, runbook: str
) -> None:
    made = _propose(kb, "Deploys need a green CI run", [f"{runbook}:L7-L8"])
    term = Terminal(kb.root, "--as", BOB)
    term.expect(PROMPT)
    term.type("comment")
    term.expect(b"Comment: ")
    term.type("which CI, the nightly one?")
    shown = term.expect(PROMPT)
    assert f"commented on {made['proposal_id']}".encode() in shown
    before = git(kb.root, "for-each-ref")
    os.write(term.master, b"\x04")  # Ctrl-D: the end of input
    assert term.finish() == 0 and b"0 approved, 0 rejected, 1 skipped" in term.seen
    assert git(kb.root, "for-each-ref") == before
    screen = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    assert screen["state"] == "pending"
    assert [c["text"] for c in screen["comments"]] == ["which CI, the nightly one?"]
