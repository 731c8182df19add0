"""Exit statuses, usage errors, JSON errors, show/list/capabilities."""

from __future__ import annotations

import json
import subprocess
import sys

from vouch.methods import registry as ops
from vouch.store.kb import KB


def test_unknown_flag_is_e100_exit_1(kb: KB, run_cli) -> None:
    res = run_cli("status", "--bogus", cwd=kb.root)
    assert res.code == 1 and "E100" in res.err


def test_missing_argument_is_e100_exit_1(kb: KB, run_cli) -> None:
    res = run_cli("show", cwd=kb.root)
    assert res.code == 1 and "E100" in res.err
    res = run_cli("show", "--json", cwd=kb.root)
    assert res.json()["error"]["code"] == "E100"


def test_unknown_command_is_e100(run_cli) -> None:
    res = run_cli("frobnicate")
    assert res.code == 1 and "E100" in res.err


def test_show_and_list(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    listed = run_cli("list", "sources", "--json", cwd=kb.root).json()
    rows = listed["items"]
    assert listed["total"] == 3 and listed["next_offset"] is None
    assert len(rows) == 3 and all("title" in r for r in rows)
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    page2 = run_cli(
        "list", "sources", "--json", "--limit", "1", "--offset", "1", cwd=kb.root
    ).json()
    assert page2["items"] == rows[1:2] and page2["total"] == 3 and page2["next_offset"] == 2
    filtered = run_cli(
        "list", "sources", "--json", "--filter", "title=deploy-runbook.md", cwd=kb.root
    ).json()
    assert [r["title"] for r in filtered["items"]] == ["deploy-runbook.md"]
    assert filtered["total"] == 1
    shown = run_cli("show", rows[0]["id"], "--json", cwd=kb.root).json()
    assert shown["kind"] == "source" and shown["id"] == rows[0]["id"]
    human = run_cli("show", rows[0]["id"], cwd=kb.root)
    assert f"id: {rows[0]['id']}" in human.out


def test_show_unknown_and_traversal_ids(kb: KB, run_cli) -> None:
    res = run_cli("show", "nothing-here-12345678", cwd=kb.root)
    assert res.code == 1 and "E101" in res.err
    res = run_cli("show", "../../etc/passwd", cwd=kb.root)
    assert res.code == 1 and "E103" in res.err


def test_capabilities_lists_exactly_the_registry(kb: KB, run_cli) -> None:
    caps = run_cli("capabilities", "--json", cwd=kb.root).json()
    assert [m["name"] for m in caps["methods"]] == list(ops.REGISTRY)
    assert caps["review_gated"] is True and caps["name"] == "vouch"
    assert "cli" in caps["transports"]
    for m in caps["methods"]:
        assert m["params"]["type"] == "object"


def test_call_runs_any_method_with_checked_params(kb: KB, run_cli) -> None:
    res = run_cli("call", "kb.read_claim", '{"id": "none-12345678"}', cwd=kb.root)
    assert res.code == 0 and res.json() is None
    res = run_cli("call", "kb.read_claim", "{}", cwd=kb.root)
    assert res.code == 1 and "missing required parameter" in res.err
    res = run_cli("call", "kb.list_claims", '{"limit": "ten"}', cwd=kb.root)
    assert res.code == 1 and "must be an integer" in res.err
    res = run_cli("call", "kb.nope", cwd=kb.root)
    assert res.code == 1 and "unknown method" in res.err
    res = run_cli("call", "kb.status", "{not json", cwd=kb.root)
    assert res.code == 1 and "E100" in res.err


def test_corrupt_file_is_exit_2_without_traceback(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    sid = run_cli("list", "sources", "--json", cwd=kb.root).json()["items"][0]["id"]
    meta = kb.dir / "sources" / sid[:2] / sid / "meta.yaml"
    meta.write_text("type: [broken\n")
    res = run_cli("show", sid, cwd=kb.root)
    assert res.code == 2 and "E201" in res.err and "Traceback" not in res.err


def test_installed_entry_point_runs(kb: KB) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vouch", "status", "--json"],
        cwd=kb.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["counts"]["sources"] == 0
    proc = subprocess.run(
        [sys.executable, "-m", "vouch", "status", "--nope"],
        cwd=kb.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_params_that_are_not_an_object_are_invalid(kb: KB) -> None:
    import pytest

    from vouch.methods.context import CallContext

    ctx = CallContext(kb_path=str(kb.root))
    for bad in ([1, 2], "x", 3):
        with pytest.raises(ops.InvalidParams):
            ops.invoke(ctx, "kb.status", bad)  # type: ignore[arg-type]


def test_a_usage_errors_format_comes_from_its_own_argv(kb: KB, run_cli) -> None:
    # `main` runs many times in one process (tests, the demo): an earlier call's
    # --format human must not make a later `--json` usage error print plain text
    assert run_cli("status", "--format", "human", cwd=kb.root).code == 0
    res = run_cli("show", "--json", cwd=kb.root)
    assert res.code == 1 and res.json()["error"]["code"] == "E100"


def test_vouch_debug_shows_the_traceback(kb: KB, run_cli, monkeypatch) -> None:
    (kb.dir / "config.yaml").write_text("review: [broken\n")
    (kb.root / "a.txt").write_text("a\n")
    assert "Traceback" not in run_cli("source", "add", "a.txt", cwd=kb.root).err
    monkeypatch.setenv("VOUCH_DEBUG", "1")
    res = run_cli("source", "add", "a.txt", cwd=kb.root)
    assert res.code == 2 and "Traceback" in res.err and "E201" in res.err


def test_shared_options_work_before_the_command(kb: KB, run_cli, tmp_path, monkeypatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    res = run_cli("--kb", str(kb.root), "--json", "status", cwd=elsewhere)
    assert res.code == 0, res.err
    assert res.json()["root"] == str(kb.dir)
    # after the command wins over before it; an explicit --kb wins over VOUCH_KB
    res = run_cli("--format", "json", "status", "--format", "human", "--kb", str(kb.root))
    assert res.out.startswith("Knowledge base:")
    monkeypatch.setenv("VOUCH_KB", str(tmp_path / "nowhere"))
    assert run_cli("--kb", str(kb.root), "status").code == 0
    res = run_cli("status", "--json")
    assert res.code == 1 and res.json()["error"]["code"] == "E001"


def test_a_listing_says_when_there_is_more(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    page = run_cli("list", "sources", "--limit", "2", cwd=kb.root)
    assert page.code == 0 and len(page.out.splitlines()) == 2
    assert "1-2 of 3" in page.err and "--offset 2" in page.err and "--limit 0" in page.err
    last = run_cli("list", "sources", "--limit", "2", "--offset", "2", cwd=kb.root)
    assert len(last.out.splitlines()) == 1 and last.err == ""
    everything = run_cli("list", "sources", "--limit", "0", "--json", cwd=kb.root).json()
    assert len(everything["items"]) == everything["total"] == 3
    assert everything["next_offset"] is None
    bare = ops_list(kb)  # the method itself still answers the spec's bare array
    assert isinstance(bare, list) and len(bare) == 3


def ops_list(kb: KB) -> object:
    from vouch.methods import registry as ops
    from vouch.methods.context import CallContext

    return ops.invoke(CallContext(kb_path=str(kb.root)), "kb.list_sources", {"limit": 0})
