"""One rule for every command's output (issue 36 item 1): human text on a terminal,
JSON when stdout is not a terminal; `--json` and `--format` always win.

The real `vouch` runs in a new process, its stdout a pipe (what scripts and agents
read) or the slave end of a pseudo-terminal (what a person sees); the warm process
prints as the client's own stdout asks, not as its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import script
from gate_support import BOB, call, propose_claim
from warm_support import answered, running

from vouch.kinds import claim
from vouch.store.kb import KB


def in_a_pipe(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vouch", *args],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ},  # as the test's environment says (so the warm process serves it)
        timeout=120,
    )


def on_a_terminal(root: Path, *args: str) -> tuple[int, str, str]:
    """`vouch ARGS` with its stdout on a pseudo-terminal: (status, stdout, stderr)."""
    cmd = [sys.executable, "-m", "vouch", *args]
    return script("readme_walkthrough").on_a_terminal(cmd, root, {**os.environ})


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@pytest.fixture
def knowledge(kb_with_sources: KB) -> Iterator[tuple[KB, str]]:
    """An approved claim and an open proposal: every listing has something to show."""
    kb = kb_with_sources
    text = "Deploys need a green CI run"
    call(kb, "kb.approve", {"proposal_id": propose_claim(kb, text)}, actor=BOB)
    propose_claim(kb, "Rollbacks are announced in the releases channel")
    yield kb, claim.KIND.make_id({"text": text})


def commands(cid: str) -> list[tuple[str, ...]]:
    return [
        ("search", "deploy"),
        ("list", "claims"),
        ("list", "sources"),
        ("show", cid),
        ("why", cid),
        ("status",),
        ("pending",),
        ("context", "how do deploys work"),
        ("doctor",),
        ("lint",),
    ]


def test_in_a_pipe_every_command_prints_json(knowledge: tuple[KB, str]) -> None:
    kb, cid = knowledge
    for args in commands(cid):
        found = in_a_pipe(kb.root, *args)
        assert found.returncode in (0, 1), (args, found.stderr)
        assert is_json(found.stdout), (args, found.stdout[:300])
        assert "Traceback" not in found.stderr, args
    # --json says the same; --format human still wins in a pipe
    assert is_json(in_a_pipe(kb.root, "context", "deploys", "--json").stdout)
    human = in_a_pipe(kb.root, "search", "deploy", "--format", "human")
    assert human.returncode == 0 and human.stdout.strip() and not is_json(human.stdout)
    assert cid in human.stdout
    markdown = in_a_pipe(kb.root, "--format", "markdown", "context", "how do deploys work")
    assert markdown.stdout.lstrip().startswith("#") and not is_json(markdown.stdout)


def test_on_a_terminal_every_command_prints_for_people(knowledge: tuple[KB, str]) -> None:
    kb, cid = knowledge
    for args in commands(cid):
        code, out, err = on_a_terminal(kb.root, *args)
        assert code in (0, 1), (args, err)
        assert out.strip() and not is_json(out), (args, out[:300])
        assert "Traceback" not in err, args
    # a search on a terminal shows hits, not every chunk's text as JSON
    code, out, _ = on_a_terminal(kb.root, "search", "deploy")
    assert code == 0 and cid in out and '"results"' not in out
    # context's form for people is its markdown
    code, out, _ = on_a_terminal(kb.root, "context", "how do deploys work")
    assert code == 0 and out.lstrip().startswith("#")
    # --format json and --json win on a terminal, before or after the command
    for args in (
        ("search", "deploy", "--format", "json"),
        ("--json", "list", "claims"),
        ("show", cid, "--json"),
    ):
        code, out, err = on_a_terminal(kb.root, *args)
        assert code == 0 and is_json(out), (args, out[:300], err)


def test_an_error_is_json_in_a_pipe_and_a_line_on_a_terminal(knowledge: tuple[KB, str]) -> None:
    kb, _ = knowledge
    piped = in_a_pipe(kb.root, "show", "c-000000000000")
    assert piped.returncode != 0 and json.loads(piped.stdout)["error"]["code"]
    assert piped.stderr.startswith("error[")
    code, out, err = on_a_terminal(kb.root, "show", "c-000000000000")
    assert code != 0 and out == "" and err.startswith("error[")
    # a usage error too: the format is read from the command line click refused
    piped = in_a_pipe(kb.root, "search", "deploy", "--top", "0")
    assert piped.returncode == 1 and is_json(piped.stdout)
    piped = in_a_pipe(kb.root, "search", "deploy", "--top", "0", "--format", "human")
    assert piped.returncode == 1 and piped.stdout == ""


def test_a_forwarded_command_prints_as_the_clients_stdout_asks(
    knowledge: tuple[KB, str],
) -> None:
    kb, cid = knowledge
    with running(kb):
        before = answered(kb)
        piped = in_a_pipe(kb.root, "search", "deploy")
        code, out, err = on_a_terminal(kb.root, "search", "deploy")
        context = on_a_terminal(kb.root, "context", "how do deploys work")
        forced = on_a_terminal(kb.root, "search", "deploy", "--json")
        assert answered(kb) == before + 4  # all four ran in the warm process
    assert piped.returncode == 0 and is_json(piped.stdout)
    assert code == 0 and cid in out and not is_json(out), err
    assert context[0] == 0 and context[1].lstrip().startswith("#")
    assert forced[0] == 0 and is_json(forced[1])
