"""Schema versions and migrations (issue 38 item 4), on real repositories.

The repository under test is made by scripts/make_old_fixture.py in the oldest format
vouch ever landed (its first commit's), and checked against that commit's own code when
vouch's git history is at hand. Version 1 is every landed format, so the upgrade tested
here is a step of the tests' own (`NAME_CONTENT`: a source's bare `content` renamed by
its media type, which readers of version 1 accept too), registered for the test only.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, script
from gate_support import a_source, call, propose_claim, show
from test_gate_crash import _run_killed_at

import vouch
from vouch.core import fastyaml
from vouch.core.config import template_text
from vouch.errors import GateRefused, SettingsInvalid
from vouch.kinds import source
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.methods.shape import MethodNotFound
from vouch.migrate import configtext, steps
from vouch.migrate.plan import plan_at
from vouch.store import audit, schema
from vouch.store.kb import KB

PROJECT = Path(vouch.__file__).resolve().parents[1]


def _name_content(files: steps.Files) -> steps.Changes:
    """Version 1 → 2 (tests only): `sources/<2>/<id>/content` → `content.<ext>`."""
    out: steps.Changes = {}
    for path in files.paths("sources"):
        folder, _, name = path.rpartition("/")
        if name != source.CONTENT:
            continue
        meta = fastyaml.load((files.read(f"{folder}/meta.yaml") or b"").decode(), where=path)
        named = source.content_name(meta.get("media_type"))
        if named != source.CONTENT:
            out[path] = None
            out[f"{folder}/{named}"] = files.read(path)
    return out


NAME_CONTENT = steps.Step(
    1,
    "name-source-content",
    "name each source's bytes by its media type",
    ("sources",),
    _name_content,
)
# the same change, declared over claims/ too: a pending claim proposal is then in its way
WIDE = steps.Step(1, "wide", "rewrite sources and claims", ("sources", "claims"), _name_content)


@pytest.fixture
def old(tmp_path: Path) -> KB:
    """A knowledge base in the oldest landed format."""
    script("make_old_fixture").make(tmp_path / "old")
    return KB.open(tmp_path / "old")


@pytest.fixture
def step() -> Iterator[steps.Step]:
    with steps.registered(NAME_CONTENT) as made:
        yield made


def _state(root: Path) -> tuple[str, str, str, str]:
    """Refs, the work tree's status, the files under .vouch/ (bytes' hashes) and the index."""
    files = git(root, "ls-files", "-s", "--others", "--exclude-standard", "--", ".vouch")
    return (
        git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        git(root, "status", "--porcelain", "--untracked-files=all"),
        subprocess.run(
            [
                "sh",
                "-c",
                "find .vouch -path .vouch/index -prune -o -type f -print | sort | xargs sha1sum",
            ],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout,
        files,
    )


def _content_names(kb: KB) -> list[str]:
    out = git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", ".vouch/sources")
    return sorted(p.rsplit("/", 1)[1] for p in out.split() if not p.endswith("meta.yaml"))


# the fixture's source: the sha256 of its document
_FIRST = "bd0840997e306a493e7785b114d972dab92b7a9344f1017798186cab90ce5261"


def _committed_version(kb: KB) -> int:
    return schema.version_in(git(kb.root, "show", "HEAD:.vouch/config.yaml"), "HEAD")


# -- the fixture: the oldest format, made the same way every run ------------------------
def test_the_old_fixture_is_the_same_every_run(tmp_path: Path) -> None:
    make = script("make_old_fixture").make
    first, second = make(tmp_path / "a"), make(tmp_path / "b")
    assert first == second  # the same commit ids: pinned times, ids and identity
    config = (tmp_path / "a" / ".vouch" / "config.yaml").read_text()
    assert schema.KEY not in config
    assert schema.version_of(tmp_path / "a" / ".vouch") == schema.BASE


def _old_vouch(tmp_path: Path) -> Path | None:
    """vouch's first commit's package, from the project's own history (None: no history)."""
    where = tmp_path / "oldcode"
    found = subprocess.run(
        [
            "git",
            "-C",
            str(PROJECT),
            "cat-file",
            "-e",
            f"{script('make_old_fixture').OLDEST_COMMIT}^{{commit}}",
        ],
        capture_output=True,
    )
    if found.returncode != 0:
        return None
    where.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(PROJECT), "archive", script("make_old_fixture").OLDEST_COMMIT, "vouch"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def _normal(text: str) -> str:
    """Times, event ids, hashes and who acted, which the old code left to the clock."""
    text = re.sub(r"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", text)
    text = re.sub(r"20\d{6}T\d{6}Z-[0-9a-f]{8}", "EVENT", text)
    text = re.sub(r'"(prev_hash|hash)":"[0-9a-f]*"', r'"\1":"H"', text)
    return re.sub(r'"actor":"[^"]*"|Vouch-Actor: .*', "ACTOR", text)


def test_the_old_fixture_is_what_the_oldest_code_writes(tmp_path: Path) -> None:
    code = _old_vouch(tmp_path)
    if code is None:
        pytest.skip("vouch's own git history is not here (an installed copy)")
    made = tmp_path / "fixture"
    ids = script("make_old_fixture").make(made)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    git(theirs, "init", "-q", "-b", "main")
    (theirs / "docs").mkdir()
    (theirs / "docs" / "deploy.md").write_bytes((made / "docs" / "deploy.md").read_bytes())
    git(theirs, "add", "-A")
    git(theirs, "commit", "-qm", "docs: how we deploy")
    env = {**os.environ, "PYTHONPATH": str(code)}
    for args in (["init"], ["source", "add", "docs/deploy.md"]):
        ran = subprocess.run(
            [sys.executable, "-m", "vouch", *args],
            cwd=theirs,
            env=env,
            capture_output=True,
            text=True,
        )
        assert ran.returncode == 0, ran.stderr
    tracked = git(theirs, "ls-files", ".vouch").split()
    assert tracked == git(made, "ls-files", ".vouch").split()
    for path in tracked:
        ours, old = (made / path).read_text(), (theirs / path).read_text()
        assert _normal(ours) == _normal(old), path
    assert f".vouch/sources/{ids['source'][:2]}/{ids['source']}/content" in tracked
    log = git(made, "log", "--format=%B")
    assert _normal(log) == _normal(git(theirs, "log", "--format=%B"))


def test_this_vouch_reads_and_writes_the_oldest_format(old: KB, run_cli) -> None:
    assert run_cli("status", "--json", cwd=old.root).json()["counts"]["sources"] == 1
    hits = run_cli("search", "second approver", "--json", "--fts-only", cwd=old.root).json()
    assert hits["results"], hits
    doctor = run_cli("doctor", "--json", cwd=old.root).json()
    assert not [i for i in doctor["issues"] if i["kind"].startswith("schema")]
    plan = run_cli("migrate", "plan", "--json", cwd=old.root).json()
    assert plan["current"] and plan["steps"] == [] and plan["version"] == schema.BASE
    src = run_cli("list", "sources", "--json", cwd=old.root).json()["items"][0]["id"]
    made = call(old, "kb.propose_claim", {"text": "Deploys need two", "evidence": [src]})
    show(old, made["proposal_id"])
    res = run_cli("approve", made["proposal_id"], "--json", cwd=old.root)
    assert res.code == 0, res.out + res.err
    assert run_cli("lint", "--json", cwd=old.root).json()["errors"] == 0


def test_the_template_is_this_vouch_s_version_and_every_step_is_there() -> None:
    assert schema.version_in(template_text("config.yaml"), "template") == schema.CURRENT
    assert len(steps.chain(schema.BASE, schema.CURRENT)) == schema.CURRENT - schema.BASE


# -- plan: every step and file, nothing written -----------------------------------------
def test_plan_lists_each_step_s_files_and_writes_nothing(old: KB, step, run_cli) -> None:
    before = _state(old.root)
    res = run_cli("migrate", "plan", "--json", cwd=old.root)
    assert res.code == 0, res.err
    plan = res.json()
    assert (plan["version"], plan["target"], plan["current"]) == (1, 2, False)
    [only] = plan["steps"]
    assert (only["from"], only["to"], only["name"]) == (1, 2, "name-source-content")
    changes = {f["path"].rsplit("/", 1)[1]: f["change"] for f in only["files"]}
    assert changes == {"content": "delete", "content.md": "add"}
    assert plan["files"] == 3  # and config.yaml
    human = run_cli("migrate", "plan", "--format", "human", cwd=old.root).out
    assert "1 → 2 name-source-content" in human and "Nothing was written" in human
    assert _state(old.root) == before


def test_doctor_says_a_repository_is_behind(old: KB, step, run_cli) -> None:
    doctor = run_cli("doctor", "--json", cwd=old.root).json()
    [behind] = [i for i in doctor["issues"] if i["kind"] == "schema-behind"]
    assert behind["severity"] == "warn" and "vouch migrate plan" in behind["message"]


# -- apply: one commit with its audit event; git revert is the way back -----------------
def test_apply_is_one_audited_commit_and_git_revert_rolls_it_back(old: KB, step, run_cli) -> None:
    root = old.root
    before_head = git(root, "rev-parse", "HEAD").strip()
    before_files = git(root, "ls-files", "-s", ".vouch")
    res = run_cli("migrate", "apply", "--json", cwd=root)
    assert res.code == 0, res.err
    done = res.json()
    assert done["applied"] and done["target"] == 2
    assert git(root, "rev-parse", "HEAD~1").strip() == before_head  # exactly one commit
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    message = git(root, "log", "-1", "--format=%B")
    assert "Vouch-Event: kb.migrate" in message and "Vouch-Migrate: 1 -> 2" in message
    last = audit.last_event(old.dir)
    assert last is not None and last["event"] == "kb.migrate"
    assert last["data"]["from"] == 1 and last["data"]["to"] == 2
    assert _committed_version(old) == 2 and _content_names(old) == ["content.md"]
    config = (old.dir / "config.yaml").read_text()
    assert "# Who you are when no --as flag" in config  # the user's comments kept
    assert run_cli("search", "second approver", "--json", "--fts-only", cwd=root).json()["results"]
    assert run_cli("lint", "--since", before_head, "--json", cwd=root).json()["errors"] == 0
    # the same command again: nothing to do, no commit
    again = run_cli("migrate", "apply", "--json", cwd=root).json()
    assert not again["applied"] and git(root, "rev-parse", "HEAD~1").strip() == before_head

    git(root, "revert", "--no-edit", "HEAD")  # the rollback: plain git
    assert _committed_version(old) == 1 and _content_names(old) == ["content"]
    assert git(root, "ls-files", "-s", ".vouch") == before_files  # byte for byte
    assert run_cli("status", "--json", cwd=root).json()["counts"]["sources"] == 1
    assert run_cli("search", "second approver", "--json", "--fts-only", cwd=root).json()["results"]
    assert run_cli("migrate", "plan", "--json", cwd=root).json()["version"] == 1
    _audit_holds(old, run_cli, before_head)  # the revert is no change outside vouch
    assert run_cli("migrate", "apply", "--json", cwd=root).json()["applied"]  # offered again
    _audit_holds(old, run_cli, before_head)


def _audit_holds(kb: KB, run_cli, base: str) -> None:
    """audit-verify, lint --since BASE and doctor find nothing wrong (doctor may say the
    knowledge is behind)."""
    verified = run_cli("audit-verify", "--json", cwd=kb.root).json()
    assert verified["ok"], verified["issues"]
    linted = run_cli("lint", "--since", base, "--json", cwd=kb.root).json()
    assert linted["errors"] == 0, linted["issues"]
    doctor = run_cli("doctor", "--json", cwd=kb.root).json()
    assert {i["kind"] for i in doctor["issues"]} <= {"schema-behind"}, doctor["issues"]


def test_a_later_revert_rolls_back_too(old: KB, step, run_cli) -> None:
    """Reverted after another vouch write: git's union merge keeps that write's audit
    events (and the migration's), the files go back, the audit still holds."""
    root = old.root
    base = git(root, "rev-parse", "HEAD").strip()
    assert run_cli("migrate", "apply", "--json", cwd=root).json()["applied"]
    migration = git(root, "rev-parse", "HEAD").strip()
    (root / "docs" / "more.md").write_text("# More\n\nA later document.\n")
    git(root, "add", "docs")
    git(root, "commit", "-qm", "docs: more")
    assert run_cli("source", "add", "docs/more.md", "--json", cwd=root).code == 0
    git(root, "revert", "--no-edit", migration)
    assert _committed_version(old) == 1
    names = git(root, "ls-tree", "--name-only", f"HEAD:.vouch/sources/{_FIRST[:2]}/{_FIRST}")
    assert names.split() == ["content", "meta.yaml"]
    assert run_cli("status", "--json", cwd=root).json()["counts"]["sources"] == 2
    _audit_holds(old, run_cli, base)


@pytest.mark.parametrize("how", ["more", "another-commit"])
def test_a_revert_that_is_not_exactly_the_migration_s_is_judged_like_any_commit(
    old: KB, step, run_cli, how: str
) -> None:
    root = old.root
    if how == "more":
        assert run_cli("migrate", "apply", "--json", cwd=root).json()["applied"]
    target = git(root, "rev-parse", "HEAD").strip()
    if how == "more":  # the migration undone, and a source's metadata edited on the way
        git(root, "revert", "--no-commit", target)
        meta = next(old.dir.glob("sources/*/*/meta.yaml"))
        meta.write_text(meta.read_text().replace("title: deploy.md", "title: edited"))
        git(root, "commit", "-qam", f"Revert\n\nThis reverts commit {target}.")
    else:  # a revert of another vouch write (the source registration): no rollback
        git(root, "revert", "--no-edit", target)
    verified = run_cli("audit-verify", "--json", cwd=root).json()
    assert not verified["ok"]
    assert any("not a vouch commit" in str(i) for i in verified["issues"]), verified


def test_a_step_is_idempotent(old: KB, step) -> None:
    files = steps.Files(old, old.repo.peek("HEAD"))
    first = NAME_CONTENT.change(files)
    assert first
    files.lay(first)
    assert {p: b for p, b in NAME_CONTENT.change(files).items() if files.read(p) != b} == {}


# -- refusals: nothing written ------------------------------------------------------------
def test_apply_refuses_uncommitted_or_untracked_changes_in_vouch(old: KB, step, run_cli) -> None:
    for dirty in ("edit", "untracked"):
        if dirty == "edit":
            with (old.dir / "config.yaml").open("a") as fh:
                fh.write("# my note\n")
        else:
            git(old.root, "checkout", "--", ".vouch/config.yaml")
            (old.dir / "notes.txt").write_text("scratch\n")
        before = _state(old.root)
        res = run_cli("migrate", "apply", "--json", cwd=old.root)
        assert res.code == 1 and json.loads(res.out)["error"]["code"] == "E105", res.out
        assert _state(old.root) == before


def test_apply_refuses_an_open_proposal_in_a_folder_it_rewrites(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    propose_claim(kb, "Deploys need a green CI run")
    with steps.registered(WIDE):
        before = _state(kb.root)
        res = run_cli("migrate", "apply", "--json", cwd=kb.root)
        assert res.code == 1 and json.loads(res.out)["error"]["code"] == "E104", res.out
        assert "open proposal" in json.loads(res.out)["error"]["message"]
        assert _state(kb.root) == before
    with steps.registered(NAME_CONTENT):  # sources only: the claim proposal is not in its way
        res = run_cli("migrate", "apply", "--json", cwd=kb.root)
        assert res.code == 0 and res.json()["applied"], res.out


def test_apply_is_a_person_s_decision(old: KB, step, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _state(old.root)
    for ctx in (
        CallContext(kb_path=str(old.root), transport="jsonl", agent="alice"),
        CallContext(kb_path=str(old.root), transport="mcp", agent="alice"),
        CallContext(kb_path=str(old.root), transport="mcp", agent="alice", tools="agent"),
        CallContext(kb_path=str(old.root)),  # the CLI, with VOUCH_AGENT set (below)
    ):
        if ctx.transport == "cli":
            monkeypatch.setenv("VOUCH_AGENT", "alice")
        with pytest.raises(GateRefused if ctx.tools == "full" else MethodNotFound):
            ops.invoke(ctx, "kb.migrate_apply", {})
        assert _state(old.root) == before
    monkeypatch.delenv("VOUCH_AGENT")
    allowed = CallContext(
        kb_path=str(old.root), transport="jsonl", agent="alice", allow_decisions=True
    )
    assert ops.invoke(allowed, "kb.migrate_apply", {})["applied"]


# -- a newer version: every write refused, reads go on ----------------------------------
def _newer(kb: KB, value: str) -> None:
    text = configtext.with_version((kb.dir / "config.yaml").read_text(), 1)
    (kb.dir / "config.yaml").write_text(text.replace(f"{schema.KEY}: 1", f"{schema.KEY}: {value}"))
    git(kb.root, "commit", "-qam", f"a newer vouch's knowledge ({value})")


def _claim(kb: KB, run_cli) -> str:
    """An approved claim's id."""
    pid = propose_claim(kb, "Approved before the upgrade")
    assert run_cli("approve", pid, "--json", cwd=kb.root).code == 0
    return str(run_cli("list", "claims", "--json", cwd=kb.root).json()["items"][0]["id"])


WRITES: list[list[str]] = [
    ["source", "add", "docs/new.md"],
    ["propose-claim", "--text", "Deploys need a green CI run", "--evidence", "SRC"],
    ["approve", "PID"],
    ["reject", "PID", "--reason", "no"],
    ["archive", "CID"],
    ["confirm", "CID"],
    ["session", "start", "--task", "x"],
    ["audit-anchor"],
    ["migrate", "apply"],
    ["init"],
]


@pytest.mark.parametrize("value", ["3", "99999999999999999999"])
def test_a_newer_version_refuses_every_write_and_reads_go_on(
    kb_with_sources: KB, run_cli, value: str
) -> None:
    kb = kb_with_sources
    cid = _claim(kb, run_cli)
    pid = propose_claim(kb, "Made before the upgrade")
    src = a_source(kb)
    (kb.root / "docs").mkdir()
    (kb.root / "docs" / "new.md").write_text("new\n")
    git(kb.root, "add", "docs")
    git(kb.root, "commit", "-qm", "a document")
    _newer(kb, value)
    before = _state(kb.root)
    for args in WRITES:
        args = [a.replace("CID", cid).replace("PID", pid).replace("SRC", src) for a in args]
        res = run_cli(*args, "--json", cwd=kb.root)
        assert res.code == 1, (args, res.out, res.err)
        error = json.loads(res.out)["error"]
        assert error["code"] == "E112", (args, error)
        assert "upgrade vouch" in error["hint"]
        assert _state(kb.root) == before, args
    assert run_cli("status", "--json", cwd=kb.root).code == 0
    assert run_cli("search", "deploy", "--json", "--fts-only", cwd=kb.root).json()["results"]
    assert run_cli("show", pid, "--json", cwd=kb.root).code == 0
    doctor = run_cli("doctor", "--json", cwd=kb.root).json()
    assert [i["kind"] for i in doctor["issues"] if i["kind"].startswith("schema")] == [
        "schema-newer"
    ]
    plan = run_cli("migrate", "plan", "--json", cwd=kb.root)
    assert plan.code == 1 and json.loads(plan.out)["error"]["code"] == "E112"


def test_a_newer_version_refuses_agent_writes_too(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    _newer(kb, "2")
    before = _state(kb.root)
    agent = CallContext(kb_path=str(kb.root), transport="jsonl", agent="alice")
    src = ops.invoke(agent, "kb.list_sources", {})[0]["id"]
    with pytest.raises(Exception) as caught:
        ops.invoke(agent, "kb.propose_claim", {"text": "An agent's claim", "evidence": [src]})
    assert caught.value.code == "E112"  # type: ignore[attr-defined]
    assert _state(kb.root) == before


def test_a_newer_version_edited_down_in_the_work_tree_still_refuses(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    cid = _claim(kb, run_cli)
    _newer(kb, "5")
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace(f"{schema.KEY}: 5", f"{schema.KEY}: 1"))
    before = _state(kb.root)
    res = run_cli("archive", cid, "--json", cwd=kb.root)
    assert res.code == 1 and json.loads(res.out)["error"]["code"] == "E112", res.out
    assert _state(kb.root) == before


@pytest.mark.parametrize("value", ["two", "0", "-1", "true", "1.5", "'2'"])
def test_a_version_vouch_cannot_read_refuses_writes(
    kb_with_sources: KB, run_cli, value: str
) -> None:
    kb = kb_with_sources
    cid = _claim(kb, run_cli)
    _newer(kb, value)
    before = _state(kb.root)
    res = run_cli("archive", cid, "--json", cwd=kb.root)
    assert res.code == 1 and json.loads(res.out)["error"]["code"] == "E111", res.out
    assert _state(kb.root) == before


# -- crash safety: killed anywhere, then an ordinary commit --------------------------------
def _whole(kb: KB) -> str:
    """ "old" or "new": HEAD holds all of the migration or none of it (else an error)."""
    version, names = _committed_version(kb), _content_names(kb)
    if version == 1 and names == ["content"]:
        return "old"
    if version == 2 and names == ["content.md"]:
        return "new"
    raise AssertionError(f"half a migration committed: version {version}, {names}")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_apply_killed_anywhere_then_git_commit_never_commits_half(
    old: KB, step, run_cli, tmp_path: Path
) -> None:
    make = script("make_old_fixture").make
    total = _run_killed_at(old.root, ["migrate", "apply"], None)
    assert total > 50 and _whole(old) == "new"
    rng = random.Random(2026112838)
    lines = sorted({rng.randint(1, total) for _ in range(14)} | {1, total - 1})
    seen = set()
    for n, line in enumerate(lines):
        root = tmp_path / f"k{n}"
        make(root)
        kb = KB.open(root)
        killed = _run_killed_at(root, ["migrate", "apply"], line) == 0
        subprocess.run(["git", "commit", "-qm", "my own work"], cwd=root, capture_output=True)
        seen.add(_whole(kb))
        res = run_cli("migrate", "apply", "--json", cwd=root)
        assert res.code == 0, (line, killed, res.out, res.err)
        assert _whole(kb) == "new", line
        assert len(audit.query(kb.dir, event="kb.migrate")) == 1, line
        assert git(root, "status", "--porcelain", "--untracked-files=all") == "", line
    assert seen == {"old", "new"}  # kills landed before and after the commit point


@pytest.mark.parametrize(
    "fault", ["committed", "journal", "objects", "index", "worktree", "staged", "refs", "synced"]
)
def test_apply_stopped_at_each_landing_step_is_finished_by_the_next_write(
    old: KB, step, run_cli, fault: str
) -> None:
    """The landing's own fault points (VOUCH_FAULT: a kill stand-in), in a real process
    that registers the test's step, then an ordinary `git commit`, then apply again."""
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r});"
        "import test_migrate as t; from vouch.migrate import steps; from vouch.cli import main;"
        "held = steps.registered(t.NAME_CONTENT); held.__enter__();"
        "sys.exit(main(['migrate', 'apply']))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code],
        cwd=old.root,
        env={**os.environ, "VOUCH_FAULT": fault},
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 86, ran.stderr
    subprocess.run(["git", "commit", "-qm", "my own work"], cwd=old.root, capture_output=True)
    _whole(old)
    res = run_cli("migrate", "apply", "--json", cwd=old.root)
    assert res.code == 0, res.out + res.err
    assert _whole(old) == "new"
    assert len(audit.query(old.dir, event="kb.migrate")) == 1
    assert git(old.root, "status", "--porcelain", "--untracked-files=all") == ""


# -- the config edit: one line, the user's text kept ---------------------------------------
def test_the_version_line_is_set_and_everything_else_kept() -> None:
    text = "# mine\n# more\n\nagent: ''\nreview:\n  approver_role: human  \n"
    out = configtext.with_version(text, 2)
    assert out.startswith("# mine\n# more\n\n") and "schema_version: 2\n" in out
    assert out.endswith("agent: ''\nreview:\n  approver_role: human  \n")
    assert configtext.with_version(out, 3) == out.replace("schema_version: 2", "schema_version: 3")
    assert configtext.with_version("", 2).strip().endswith("schema_version: 2")
    with pytest.raises(SettingsInvalid):  # a form the one-line edit cannot follow
        configtext.with_version("{schema_version: 1, agent: x}\n", 2)


@pytest.mark.parametrize("bump", [False, True])
def test_a_forged_migration_is_caught(kb_with_sources: KB, run_cli, bump: bool) -> None:
    """A commit typed as a migration (trailers and all) that adds a claim — leaving the
    version alone, or raising it as a real step would — is knowledge outside the gate:
    `lint --since` recomputes the migration from its parent and names it."""
    kb = kb_with_sources
    base = git(kb.root, "rev-parse", "HEAD").strip()
    pid = propose_claim(kb, "Smuggled in")
    cid_path = git(kb.root, "diff", "--name-only", base, f"refs/heads/vouch/proposal/{pid}").split()
    git(kb.root, "checkout", "-q", f"refs/heads/vouch/proposal/{pid}", "--", *cid_path)
    with steps.registered(NAME_CONTENT):
        if bump:  # the version raised, and the step's own changes made too
            for path, data in plan_at(kb, base).changes.items():
                target = kb.dir / path
                if data is None:
                    target.unlink()
                else:
                    target.write_bytes(data)
            git(kb.root, "add", "-A", ".vouch")
        git(kb.root, "commit", "-qm", "vouch: migrate\n\nVouch-Event: kb.migrate\nVouch-Actor: x")
        res = run_cli("lint", "--since", base, "--json", cwd=kb.root).json()
    said = "are not what migrating 1 -> 2 makes" if bump else "leaves the schema version at 1"
    assert any(i["kind"] == "outside-vouch" and said in i["message"] for i in res["issues"]), res[
        "issues"
    ]


@pytest.mark.parametrize(
    "path", ["claims/x.yaml", "sources/../../x", "/etc/x", "config.yaml", "sources//x"]
)
def test_a_step_that_writes_outside_its_folders_stops_the_plan(old: KB, path: str) -> None:
    stray = steps.Step(
        1, "stray", "writes where it said it would not", ("sources",), lambda _: {path: b"x"}
    )
    before = _state(old.root)
    with steps.registered(stray), pytest.raises(AssertionError, match="outside"):
        plan_at(old, old.repo.peek("HEAD"))
    assert _state(old.root) == before
