"""Completeness: every kb.* method of kb-methods.md on every transport, gap always visible.

The spec is read from `<repo>/../shared/spec/kb-methods.md` (CI clones `shared/` beside
the repository) and otherwise from the copy in tests/fixtures/. A spec method that is not
registered yet belongs to an unfinished issue: it is reported as a warning, not a
failure. A REGISTERED method missing from the CLI, JSONL, MCP or `kb.capabilities` fails.

Each transport is probed with a deliberately unknown parameter, so the request is routed
to the method and refused by its parameter check without running the handler.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import click
import pytest

from vouch.cli import cli
from vouch.methods import registry as ops
from vouch.servers import jsonl, server_context
from vouch.servers import mcp as mcp_server
from vouch.store.kb import KB

_HERE = Path(__file__).parent
SPEC_PATHS = (
    _HERE.parent.parent / "shared" / "spec" / "kb-methods.md",
    _HERE / "fixtures" / "kb-methods.md",
)
_PROBE = {"__coverage_probe__": 1}


def spec_methods() -> list[str]:
    """Method names in kb-methods.md, expanding `kb.read_{page,claim}` style groups."""
    text = next(p for p in SPEC_PATHS if p.is_file()).read_text(encoding="utf-8")
    names: set[str] = set()
    for match in re.finditer(r"kb\.([a-z_]+)(?:\{([a-z_,]+)\})?", text):
        stem, group = match.groups()
        if group:
            names.update(f"kb.{stem}{item}" for item in group.split(","))
        elif not stem.endswith("_"):
            names.add(f"kb.{stem}")
    return sorted(names)


def _routed(body: dict) -> bool:
    """An error body that shows the method exists (refused for the probe parameter)."""
    return body["code"] == "invalid_request" and "unknown parameter" in body["message"]


def transports_missing(kb: KB, run_cli, name: str) -> list[str]:
    missing = []
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    capabilities = {m["name"] for m in ops.capabilities(ctx)["methods"]}
    if name not in capabilities:
        missing.append("capabilities")

    line = json.dumps({"id": 1, "method": name, "params": _PROBE}).encode()
    response = jsonl.handle_line(ctx, line)
    if response["ok"] or not _routed(response["error"]):
        missing.append("jsonl")

    method = ops.REGISTRY.get(name)
    tools = {t.name: t for t in mcp_server.tools()}
    tool = tools.get(method.tool_name if method else name.replace(".", "_"))
    if tool is None or tool.input_schema != method.input_schema():  # type: ignore[union-attr]
        missing.append("mcp")
    else:
        result = mcp_server.call(ctx, tool.name, dict(_PROBE))
        if not (result.is_error and _routed(result.structured_content["error"])):
            missing.append("mcp")

    res = run_cli("call", name, json.dumps(_PROBE), "--json", "--kb", str(kb.dir))
    if res.code != 1 or "unknown parameter" not in res.out:
        missing.append("cli")
    return missing


def test_spec_parsing_finds_the_whole_surface() -> None:
    names = spec_methods()
    assert len(names) >= 35
    assert {
        "kb.read_relation",
        "kb.list_pending",
        "kb.propose_claim",
        "kb.import_apply",
        "kb.capabilities",
        "kb.search",
    } <= set(names)


def test_every_registered_method_is_on_every_transport(kb: KB, run_cli) -> None:
    gaps = {name: transports_missing(kb, run_cli, name) for name in sorted(ops.REGISTRY)}
    broken = {name: where for name, where in gaps.items() if where}
    assert not broken, f"registered methods missing from a transport: {broken}"


# kb-methods.md methods whose issues are still open. Registering one fails this test
# until it is struck from the list, so the list is always the true gap.
NOT_YET: set[str] = set()
# registered methods the spec does not name (decided where it was silent)
EXTRA = {
    "kb.register_evidence",
    "kb.read_proposal",
    "kb.audit_verify",
    "kb.audit_anchor",
    "kb.index_status",
    "kb.info",
    "kb.tags",
    "kb.promote",
    "kb.source_history",
    "kb.why",
    "kb.log",
    "kb.diff",
    "kb.blame",
    "kb.revise_proposal",
    "kb.comment_proposal",
    "kb.gate_stats",
    "kb.impact",
    "kb.propose_change",
    "kb.redact",
    "kb.delete",
    "kb.source_refresh",
    "kb.migrate_plan",
    "kb.migrate_apply",
    "kb.forget",
    "kb.graph",
}


def test_spec_methods_not_registered_yet_are_exactly_the_open_ones(kb: KB) -> None:
    not_yet = {name for name in spec_methods() if name not in ops.REGISTRY}
    extra = set(ops.REGISTRY) - set(spec_methods())
    if not_yet:
        warnings.warn(
            f"{len(not_yet)} of {len(spec_methods())} kb-methods.md methods are not "
            f"registered yet (absent on cli, jsonl, mcp and capabilities): "
            + ", ".join(sorted(not_yet)),
            stacklevel=1,
        )
    assert not_yet == NOT_YET
    assert extra == EXTRA
    assert all(name.startswith("kb.") for name in ops.REGISTRY)


@pytest.mark.parametrize("name", ["kb.status", "kb.register_source"])
def test_probe_does_not_run_the_handler(kb: KB, run_cli, name: str) -> None:
    before = (kb.dir / "audit.log.jsonl").read_text()
    assert transports_missing(kb, run_cli, name) == []
    assert (kb.dir / "audit.log.jsonl").read_text() == before


# -- the CLI is generated from the registry ----------------------------------------------
def _command(path: tuple[str, ...]) -> click.Command | None:
    ctx = click.Context(cli)
    command = cli.get_command(ctx, path[0])
    for word in path[1:]:
        if not isinstance(command, click.Group):
            return None
        command = command.get_command(ctx, word)
    return command


SHARED = {"kb_path", "actor", "fmt", "as_json"}


def cli_surface(method: ops.Method) -> dict[str, tuple[bool, object]]:
    """{parameter: (required, default)} as the method's command offers it."""
    from vouch.cli.custom import CUSTOM

    command = _command(method.command)
    assert command is not None, f"{method.name} has no command `vouch {' '.join(method.command)}`"
    extras = {p.name for p in CUSTOM[method.name].options()} if method.name in CUSTOM else set()
    out: dict[str, tuple[bool, object]] = {}
    for param in command.params:
        if param.name in SHARED or param.name in extras or "__" in (param.name or ""):
            continue
        default = param.default if not param.multiple and param.nargs == 1 else None
        if type(default).__name__ == "Sentinel":  # click's "no default"
            default = None
        if isinstance(param, click.Option) and param.is_flag:
            default = bool(default)
        out[str(param.name)] = (bool(param.required), default)
    return out


def registry_surface(method: ops.Method) -> dict[str, tuple[bool, object]]:
    out: dict[str, tuple[bool, object]] = {}
    for p in method.params:
        if p.name in method.cli.presets:
            continue
        kind = p.schema.get("type")
        default = (
            bool(p.default)
            if kind == "boolean"
            else (None if kind in ("array", "object") else p.default)
        )
        required = p.required or (method.cli.repeat and p.name == method.cli.args[0])
        out[p.name] = (required, default)
    return out


@pytest.mark.parametrize("name", sorted(ops.REGISTRY))
def test_each_method_has_its_command_with_the_same_parameters(name: str) -> None:
    method = ops.REGISTRY[name]
    assert cli_surface(method) == registry_surface(method)


@pytest.mark.parametrize("name", sorted(ops.REGISTRY))
def test_jsonl_mcp_and_capabilities_share_one_schema(kb: KB, name: str) -> None:
    method = ops.REGISTRY[name]
    tools = {t.name: t for t in mcp_server.tools()}
    assert tools[method.tool_name].input_schema == method.input_schema()
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    described = {m["name"]: m for m in ops.capabilities(ctx)["methods"]}
    assert described[name]["params"] == method.input_schema()


def probe_handler(
    ctx: object, word: str, times: int = 2, loud: bool = False, tags: list[str] | None = None
) -> dict[str, object]:
    """The throwaway method's handler (importable as test_method_coverage:probe_handler)."""
    text = " ".join([word] * times)
    return {"said": text.upper() if loud else text, "tags": tags or []}


def test_a_new_method_appears_everywhere_with_no_other_edit(kb: KB, run_cli) -> None:
    method = ops.register(
        ops.Method(
            "kb.zz_probe",
            "read",
            "A throwaway method.",
            "test_method_coverage:probe_handler",
            (
                ops.Param("word", {"type": "string"}, required=True),
                ops.Param("times", {"type": "integer", "minimum": 1}, default=2),
                ops.Param("loud", {"type": "boolean"}, default=False),
                ops.Param("tags", {"type": "array", "items": {"type": "string"}}),
            ),
        )
    )
    try:
        res = run_cli(
            "zz-probe", "--word", "hi", "--loud", "--tags", "a,b", "--json", "--kb", str(kb.dir)
        )
        assert res.code == 0, res.err
        assert res.json() == {"said": "HI HI", "tags": ["a", "b"]}
        assert run_cli("zz-probe", "--json", "--kb", str(kb.dir)).code == 1  # --word required
        ctx = server_context("jsonl", kb_path=str(kb.dir))
        line = json.dumps(
            {"id": 1, "method": "kb.zz_probe", "params": {"word": "yo", "times": 3}}
        ).encode()
        assert jsonl.handle_line(ctx, line)["result"] == {"said": "yo yo yo", "tags": []}
        assert "kb_zz_probe" in {t.name for t in mcp_server.tools()}
        result = mcp_server.call(ctx, "kb_zz_probe", {"word": "x"})
        assert not result.is_error and result.structured_content["said"] == "x x"
        assert "kb.zz_probe" in {m["name"] for m in ops.capabilities(ctx)["methods"]}
        assert cli_surface(method) == registry_surface(method)
    finally:
        del ops.REGISTRY["kb.zz_probe"]
