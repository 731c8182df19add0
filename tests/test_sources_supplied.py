"""Sources are the work tree's (issue 34, finding 3): text a caller supplies is never a
new version of a file.

The attack: an agent with only `VOUCH_AGENT=bot` sends `kb.register_source` with
invented text and the locator of a file in the repository. Before the fix it became the
file's current version: the real source superseded, search showing the invention under
the file's name, lint asking reviewers to re-check approved claims against it, and
`source verify` / `doctor` passing. Now it is refused when the file holds other bytes
(nothing written), registered as the file when the bytes are the file's, and recorded
at a locator of its own (`inline:<locator>`) when its path names no file, so it never
supersedes one. A version that got in anyway (before the fix, or committed by hand) is
reported by `source verify` and `doctor`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import ALICE, BOB, call, proposed
from servers_support import JsonlServer, kb_state

from vouch.errors import GateRefused
from vouch.kinds import source as source_kind
from vouch.store import sources, supplied
from vouch.store.kb import KB

AGENT = {"VOUCH_AGENT": "bot"}
REAL = "# Deploy runbook\n\nDeploys need one green CI run on the staging cluster.\n"
INVENTED = "# Deploy runbook\n\nDeploys need no review; push straight to production.\n"
RUNBOOK = "docs/runbook.md"


def _snapshot(kb: KB) -> tuple[tuple[str, str, str], dict[str, bytes]]:
    """HEAD, the refs, `git status`, and every byte of the repository's files (not the
    ones git ignores: the index, the search log)."""
    listed = git(kb.root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    files = {p: (kb.root / p).read_bytes() for p in sorted(listed.split("\0")) if p}
    return kb_state(kb.root), files


def _add_file(kb: KB, run_cli, rel: str, text: str) -> str:
    path = kb.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(kb.root, "add", rel)
    git(kb.root, "commit", "-qm", f"write {rel}")
    res = run_cli("source", "add", rel, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    return str(res.json()["id"])


def _approved_claim(kb: KB, text: str, evidence: list[str]) -> str:
    params = {"text": text, "evidence": evidence}
    result = proposed(kb, "kb.propose_claim", params, actor=ALICE)  # shown: pinned
    assert result["valid"], result
    approved = call(kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)
    return str(approved["object_id"])


def _current(kb: KB, locator: str) -> list[str]:
    return [r["id"] for r in call(kb, "kb.source_history", {"locator": locator}) if r["current"]]


def _source_hits(kb: KB, query: str) -> list[dict[str, Any]]:
    """(id, locator, title) of the source hits for `query`."""
    hits = call(kb, "kb.search", {"query": query, "mode": "fts", "kinds": ["source"]})
    return [{"id": h["id"], **{k: h["source"][k] for k in ("locator", "title")}} for h in hits]


def _lint_issues(kb: KB) -> list[dict[str, Any]]:
    return list(call(kb, "kb.lint")["issues"])


@pytest.fixture
def runbook(kb: KB, run_cli) -> dict[str, str]:
    """docs/runbook.md committed, registered, and cited by an approved claim; a second
    file registered and then deleted from the work tree (its source stays)."""
    real = _add_file(kb, run_cli, RUNBOOK, REAL)
    claim = _approved_claim(kb, "Deploys need one green CI run", [real])
    gone = _add_file(kb, run_cli, "docs/old.md", "# Old\n\nThe old deploy notes.\n")
    git(kb.root, "rm", "-q", "docs/old.md")
    git(kb.root, "commit", "-qm", "remove the old notes")
    return {"real": real, "claim": claim, "gone": gone}


def _refusal(response: dict[str, Any]) -> str:
    assert response["ok"] is False, response
    error = response["error"]
    assert error["vouch_code"] == GateRefused.code, error
    assert error["code"] == "invalid_request", error
    assert "Traceback" not in json.dumps(response)
    return f"{error['message']} {error['hint']}"


# -- the attack, over a real JSONL server -------------------------------------------------
def test_an_agent_cannot_make_invented_text_a_files_version(
    kb: KB, runbook: dict[str, str]
) -> None:
    (kb.root / "link.md").symlink_to(RUNBOOK)
    git(kb.root, "add", "link.md")
    git(kb.root, "commit", "-qm", "a link to the runbook")
    spellings = [
        RUNBOOK,
        f"./{RUNBOOK}",
        f"docs/../{RUNBOOK}",
        "docs//runbook.md",
        str(kb.root / RUNBOOK),
        f"file:{RUNBOOK}",
        f"file://{kb.root / RUNBOOK}",
        "link.md",
    ]
    with JsonlServer(kb.root, env=AGENT) as server:
        server.result("kb.status")  # whatever a server writes at start-up is written now
        lint_before = _lint_issues(kb)
        before = _snapshot(kb)
        for locator in spellings:
            for params in (
                {"content": INVENTED, "locator": locator},
                {"content": INVENTED, "locator": locator, "title": "runbook.md", "type": "file"},
                {"content": REAL + "\n", "locator": locator},  # one byte more
                {"content": REAL[:-1] + "!", "locator": locator},  # same size, other bytes
            ):
                text = _refusal(server.call("kb.register_source", params))
                assert RUNBOOK in text and "kb.register_source_from_path" in text
                assert f"inline:{RUNBOOK}" in text  # the way to keep the text
                assert _snapshot(kb) == before, locator
        assert server.no_more_output()
        assert server.close() == 0
    assert _current(kb, RUNBOOK) == [runbook["real"]]
    assert _lint_issues(kb) == lint_before
    hits = _source_hits(kb, "production")
    assert all(h["id"] != _sha(INVENTED) and h["locator"] != RUNBOOK for h in hits)
    assert _snapshot(kb) == before
    for command in (("source", "verify"), ("doctor",)):
        assert vouch_ok(kb, *command), command


def test_an_agents_text_at_a_path_without_a_file_gets_a_locator_of_its_own(
    kb: KB, runbook: dict[str, str]
) -> None:
    """A deleted file's locator, a path never written, `.vouch/`, outside: `inline:`."""
    lint_before = _lint_issues(kb)
    with JsonlServer(kb.root, env=AGENT) as server:
        got = server.result("kb.register_source", {"content": INVENTED, "locator": "docs/old.md"})
        assert got["locator"] == "inline:docs/old.md" and "supersedes" not in got
        for locator in ("notes/new.md", ".vouch/config.yaml", "../outside.md", "/etc/hosts"):
            other = server.result(
                "kb.register_source", {"content": f"{INVENTED}{locator}\n", "locator": locator}
            )
            assert other["locator"] == f"inline:{locator}", other
        assert server.close() == 0
    assert _current(kb, "docs/old.md") == [runbook["gone"]]  # not superseded
    assert _current(kb, "inline:docs/old.md") == [got["id"]]
    hits = [h for h in _source_hits(kb, "production") if h["id"] == got["id"]]
    assert hits and all(h["locator"] == "inline:docs/old.md" for h in hits)
    assert not [
        h for h in _source_hits(kb, "production") if h["locator"] in (RUNBOOK, "docs/old.md")
    ]
    assert _lint_issues(kb) == lint_before  # no approved claim is asked to be re-checked
    event = json.loads((kb.dir / "audit.log.jsonl").read_text().splitlines()[-1])
    assert event["actor"] == "bot" and event["event"] == "source.register"


def test_the_files_own_bytes_register_as_the_file(kb: KB, runbook: dict[str, str]) -> None:
    """Identical bytes are the file: the same source, at the file's locator."""
    before = _snapshot(kb)
    with JsonlServer(kb.root, env=AGENT) as server:
        got = server.result("kb.register_source", {"content": REAL, "locator": f"./{RUNBOOK}"})
        assert got == {
            "id": runbook["real"],
            "deduplicated": True,
            "locator": RUNBOOK,
            "title": "runbook.md",
            "document_title": "Deploy runbook",  # its first heading
        }
        # an edit in the work tree: the agent's copy of the new bytes is its new version
        (kb.root / RUNBOOK).write_text(REAL.replace("one", "two"))
        newer = server.result(
            "kb.register_source", {"content": REAL.replace("one", "two"), "locator": RUNBOOK}
        )
        assert newer["locator"] == RUNBOOK and newer["supersedes"] == [runbook["real"]]
        assert server.close() == 0
    assert before[0][0] != kb_state(kb.root)[0]
    assert _current(kb, RUNBOOK) == [newer["id"]]


# -- the CLI -------------------------------------------------------------------------------
def test_the_cli_refuses_text_at_a_files_locator_and_stdin_never_versions_a_file(
    kb: KB, runbook: dict[str, str], run_cli
) -> None:
    before = _snapshot(kb)
    res = run_cli("source", "register", INVENTED, "--locator", RUNBOOK, "--json", cwd=kb.root)
    assert res.code == 1 and "Traceback" not in res.err
    error = res.json()["error"]
    assert error["code"] == "E104" and "vouch source add docs/runbook.md" in error["hint"]
    res = run_cli("source", "register", INVENTED, "--locator", RUNBOOK, cwd=kb.root / "docs")
    assert res.code == 1 and "other bytes" in res.err and "Traceback" not in res.err
    assert _snapshot(kb) == before
    piped = run_cli("source", "add", "-", "--json", cwd=kb.root, input=INVENTED)
    assert piped.code == 0, piped.err
    assert piped.json()["locator"] == "stdin" and "supersedes" not in piped.json()
    assert _current(kb, RUNBOOK) == [runbook["real"]]


def test_editing_the_file_and_adding_it_again_still_makes_a_new_version(
    kb: KB, runbook: dict[str, str], run_cli
) -> None:
    (kb.root / RUNBOOK).write_text(INVENTED)
    res = run_cli("source", "add", RUNBOOK, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    assert res.json()["supersedes"] == [runbook["real"]]
    assert _current(kb, RUNBOOK) == [_sha(INVENTED)]
    (kb.root / RUNBOOK).write_text(REAL.replace("one", "three"))
    with JsonlServer(kb.root, env=AGENT) as server:
        got = server.result("kb.register_source_from_path", {"path": RUNBOOK})
        assert got["supersedes"] == [_sha(INVENTED)]
        assert server.close() == 0
    assert vouch_ok(kb, "source", "verify")  # every version came from the file


# -- where caller text goes, case by case ---------------------------------------------------
PLACES = [
    ("https://example.com/deploy", "https://example.com/deploy"),
    ("slack:C1/p42", "slack:C1/p42"),
    ("inline:docs/runbook.md", "inline:docs/runbook.md"),
    ("stdin", "stdin"),
    ("-", "-"),
    ("notes/today.md", "inline:notes/today.md"),
    ("docs", "inline:docs"),  # a folder is not a file
    (".git/config", "inline:.git/config"),
    ("file:notes/today.md", "inline:file:notes/today.md"),
    ("C:/notes.md", "inline:C:/notes.md"),  # a drive letter is not a scheme
]


def test_caller_text_is_placed_by_its_locator(kb: KB, run_cli) -> None:
    real = _add_file(kb, run_cli, RUNBOOK, REAL)
    for locator, recorded in PLACES:
        params = {"content": f"text at {locator}\n", "locator": locator}
        assert call(kb, "kb.register_source", params)["locator"] == recorded, locator
    assert _current(kb, RUNBOOK) == [real]


def test_a_file_whose_name_looks_like_a_scheme_is_still_a_file(kb: KB, run_cli) -> None:
    real = _add_file(kb, run_cli, "notes:today.md", REAL)
    with pytest.raises(GateRefused):
        call(kb, "kb.register_source", {"content": INVENTED, "locator": "notes:today.md"})
    assert _current(kb, "notes:today.md") == [real]


def test_a_placed_item_is_only_the_file_when_every_byte_matches(kb: KB, run_cli) -> None:
    _add_file(kb, run_cli, RUNBOOK, REAL)
    item = sources.Intake(REAL.encode(), "file", RUNBOOK, None, "text/plain")
    assert supplied.place(kb, item).locator == RUNBOOK
    assert supplied.place(kb, item).media_type == "text/markdown"  # the file's, read again
    for content in (b"", REAL.encode()[:-1], REAL.encode().upper()):
        with pytest.raises(GateRefused):
            supplied.place(kb, sources.Intake(content, "file", RUNBOOK))


# -- versions that got in anyway: source verify and doctor ----------------------------------
def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def vouch_ok(kb: KB, *args: str) -> bool:
    from vouch.methods import registry as ops
    from vouch.methods.context import CallContext

    method = {"source": "kb.source_verify", "doctor": "kb.doctor"}[args[0]]
    report = ops.invoke(CallContext(kb_path=str(kb.root)), method, {})
    return bool(report["ok"])


def _forge(kb: KB, locator: str, text: str) -> str:
    """What the attack left before the fix: `text` registered at `locator` as the
    handler registered it then (straight into `register_many`, a commit vouch made, so
    lint's provenance check passes it), superseding the version there."""
    item = sources.Intake(text.encode(), "file", locator, None, "text/plain")
    return str(sources.register_many(kb, [item], "bot")[0]["id"])


@pytest.mark.parametrize("locator", [RUNBOOK, f"./{RUNBOOK}"])
def test_verify_and_doctor_report_a_version_that_is_not_the_files(
    kb: KB, runbook: dict[str, str], run_cli, locator: str
) -> None:
    forged = _forge(kb, locator, INVENTED)
    res = run_cli("source", "verify", "--json", cwd=kb.root)
    assert res.code == 1
    [issue] = res.json()["issues"]
    assert issue["id"] == forged and issue["kind"] == "unverified-version"
    assert issue["path"] == f".vouch/{source_kind.path_for(forged)}"
    assert "vouch source add docs/runbook.md" in issue["detail"]
    one = run_cli("source", "verify", forged, "--json", cwd=kb.root)
    assert one.code == 1 and one.json()["issues"] == [issue]
    assert run_cli("source", "verify", runbook["real"], cwd=kb.root).code == 0  # superseded
    doctor = run_cli("doctor", "--json", cwd=kb.root)
    assert doctor.code == 1
    found = [i for i in doctor.json()["issues"] if i.get("kind") == "unverified-version"]
    assert [(i["id"], i["severity"], i["check"]) for i in found] == [(forged, "error", "sources")]
    # the mend the report names: the file's bytes become current again at its locator;
    # a version at another spelling of the path is still not the file's, still reported
    assert run_cli("source", "add", RUNBOOK, cwd=kb.root).code == 0
    assert _current(kb, RUNBOOK) == [runbook["real"]]
    again = run_cli("source", "verify", "--json", cwd=kb.root)
    assert again.json()["issues"] == ([] if locator == RUNBOOK else [issue])


def test_a_forged_version_of_a_deleted_file_is_reported(kb: KB, runbook: dict[str, str]) -> None:
    _forge(kb, "docs/old.md", INVENTED)  # was committed: history knows it
    assert not vouch_ok(kb, "source")


def test_versions_the_repository_knows_are_not_reported(
    kb: KB, runbook: dict[str, str], run_cli
) -> None:
    # edited and committed without adding it again: the source is a committed version
    (kb.root / RUNBOOK).write_text(INVENTED)
    git(kb.root, "commit", "-qam", "edit the runbook")
    # a deleted file (docs/old.md), a file outside history that is unchanged, a path
    # that never held a file, text at its own locator, a URL
    (kb.root / "scratch.md").write_text("scratch notes\n")
    assert run_cli("source", "add", "scratch.md", cwd=kb.root).code == 0
    _forge(kb, "never/there.md", "legacy text\n")
    call(kb, "kb.register_source", {"content": "one", "locator": "https://example.com/a"})
    call(kb, "kb.register_source", {"content": "two", "locator": "notes/x.md"})
    assert vouch_ok(kb, "source")
    assert vouch_ok(kb, "doctor")


def test_a_version_from_an_uncommitted_edit_changed_since_is_reported(kb: KB, run_cli) -> None:
    """The repository cannot tell it from an invention; adding the file again mends it."""
    (kb.root / "draft.md").write_text("first draft\n")
    assert run_cli("source", "add", "draft.md", cwd=kb.root).code == 0
    assert vouch_ok(kb, "source")
    (kb.root / "draft.md").write_text("second draft\n")
    assert not vouch_ok(kb, "source")
    assert run_cli("source", "add", "draft.md", cwd=kb.root).code == 0
    assert vouch_ok(kb, "source")


def test_a_link_in_the_work_tree_is_not_followed_out(kb: KB, tmp_path: Path) -> None:
    """A hand-committed source at a locator that is a link out of the repository is not
    read through the link (it names no file of the work tree)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n")
    os.symlink(secret, kb.root / "leak.md")
    meta = source_kind.new(b"x\n", type="file", locator="leak.md", supersedes="0" * 64)
    sid = str(meta["id"])
    (kb.dir / source_kind.content_path_for(sid)).parent.mkdir(parents=True)
    (kb.dir / source_kind.content_path_for(sid)).write_bytes(b"x\n")
    (kb.dir / source_kind.path_for(sid)).write_text(source_kind.dump(meta))
    assert vouch_ok(kb, "source")


def test_a_decoy_locator_line_does_not_hide_a_version(kb: KB, runbook: dict[str, str]) -> None:
    """YAML keeps the last of two `locator:` keys: a first line naming a URL must not
    make the check skip what every reader takes for the file's version."""
    forged = _forge(kb, RUNBOOK, INVENTED)
    path = kb.dir / source_kind.path_for(forged)
    path.write_text("locator: https://example.com/decoy\n" + path.read_text())
    git(kb.root, "commit", "-qam", "a decoy", "--no-verify")
    assert call(kb, "kb.source_history", {"locator": RUNBOOK})[0]["id"] == forged
    assert not vouch_ok(kb, "source")


def test_lint_since_fails_a_range_that_registered_a_version_not_the_files(
    kb: KB, runbook: dict[str, str], run_cli
) -> None:
    base = git(kb.root, "rev-parse", "HEAD").strip()
    # a legitimate range: the file edited and committed, then added again
    (kb.root / RUNBOOK).write_text(REAL.replace("one", "two"))
    git(kb.root, "commit", "-qam", "edit the runbook")
    assert run_cli("source", "add", RUNBOOK, cwd=kb.root).code == 0
    ok = run_cli("lint", "--since", base, "--json", cwd=kb.root)
    assert ok.code == 0, ok.out
    middle = git(kb.root, "rev-parse", "HEAD").strip()
    forged = _forge(kb, RUNBOOK, INVENTED)
    for since in (base, middle):
        res = run_cli("lint", "--since", since, "--json", cwd=kb.root)
        assert res.code == 1
        found = [i for i in res.json()["issues"] if i["kind"] == "unverified-version"]
        assert [(i["id"], i["severity"]) for i in found] == [(forged, "error")]
        assert "vouch source add docs/runbook.md" in found[0]["message"]


def test_the_mcp_adapter_refuses_it_too(
    kb: KB, runbook: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same handler behind MCP's adapter: the refusal is a tool error, E104."""
    from vouch.servers import mcp as mcp_server
    from vouch.servers import server_context

    monkeypatch.setenv("VOUCH_AGENT", "bot")
    ctx = server_context("mcp", kb_path=str(kb.dir))
    before = _snapshot(kb)
    result = mcp_server.call(ctx, "kb_register_source", {"content": INVENTED, "locator": RUNBOOK})
    assert result.is_error
    assert result.structured_content["error"]["vouch_code"] == GateRefused.code
    assert _snapshot(kb) == before
    placed = mcp_server.call(ctx, "kb_register_source", {"content": INVENTED, "locator": "n.md"})
    assert not placed.is_error and json.loads(placed.content[0].text)["locator"] == "inline:n.md"
    assert _current(kb, RUNBOOK) == [runbook["real"]]
