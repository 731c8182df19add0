"""A user error is said once: one `error[...]` line on stderr, exit status 1, no traceback.

Each command runs as users run it (`python -m vouch` in a fresh `vouch init` repository,
the home directory and git config isolated), human output. A group run without a
command (`vouch`, `vouch source`) shows its help once — not the help wrapped in an error
line that then points at the help — and a bundle that is not there is named once.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gate_support import vouch_proc

from vouch.store.kb import KB

# (arguments, the message's words that must appear exactly once in all the output)
FAILING = [
    (["approve", "nosuch"], "'nosuch' is not a proposal id"),
    (["approve", "20260517-101500-1a2b3c4d"], "no open proposal 20260517-101500-1a2b3c4d"),
    (["show", "nosuch"], "id 'nosuch' is not a vouch id"),
    (["show", "gone-1234abcd"], "no object with id gone-1234abcd"),
    (["source", "add", "/nonexistent-vouch-test"], "is outside the repository"),
    (["lint", "--since", "nosuch"], "--since 'nosuch' is not a commit here"),
    (["import-apply", "/nonexistent-vouch-test.tar.gz"], "no such file"),
    (["review"], "standard input is not one"),
    (["reject", "nosuch", "--reason", "no"], "'nosuch' is not a proposal id"),
    (["frobnicate"], "No such command 'frobnicate'"),
]


def _said_once(out: str, err: str, words: str) -> None:
    assert "Traceback" not in out + err, err
    assert len(re.findall(r"^error\[E\d+\]", err, re.M)) == 1, err
    assert err.count(words) == 1, err
    # stdout is a pipe: the same error once more, as the one JSON object a script reads
    error = json.loads(out)["error"]
    assert err.startswith(f"error[{error['code']}]") and words in error["message"], out


@pytest.mark.parametrize(("args", "words"), FAILING, ids=[" ".join(a) for a, _ in FAILING])
def test_a_user_error_is_said_once(kb: KB, args: list[str], words: str) -> None:
    done = vouch_proc(kb.root, *args)
    assert done.returncode == 1, done.stderr
    _said_once(done.stdout, done.stderr, words)


@pytest.mark.parametrize("group", [[], ["source"], ["warm"]])
def test_a_group_without_a_command_shows_its_help_once(kb: KB, group: list[str]) -> None:
    # bare `vouch` given an option is not bare any more: in a pipe it answers in JSON too
    human = ["--format", "human"] if group else []
    done = vouch_proc(kb.root, *human, *group)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    usage = f"Usage: {' '.join(['vouch', *group])} [OPTIONS] COMMAND [ARGS]..."
    assert done.stderr.count(usage) == 1, done.stderr
    if group:
        assert done.stdout == "", done.stdout
    else:
        assert json.loads(done.stdout)["error"]["message"] == "vouch needs a command"
    assert "error[" not in done.stderr and "--help`)" not in done.stderr, done.stderr
    assert "Commands:" in done.stderr
    if group:  # asked for JSON, the error is JSON too
        as_json = vouch_proc(kb.root, "--json", *group)
        assert as_json.returncode == 1
        error = json.loads(as_json.stdout)["error"]
        assert error["code"] == "E100" and error["message"] == f"vouch {group[0]} needs a command"


def test_a_missing_bundle_is_named_once(kb: KB, tmp_path: Path) -> None:
    gone = str(tmp_path / "gone.tar.gz")
    done = vouch_proc(kb.root, "export-check", gone, "--format", "human")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stdout.count(gone) == 2, done.stdout  # the problem line, the verdict line
    assert f"{gone}: no such file" in done.stdout and f"{gone}: {gone}" not in done.stdout
    folder = tmp_path / "a-folder.tar.gz"
    folder.mkdir()
    refused = vouch_proc(kb.root, "import-apply", str(folder))
    assert refused.returncode == 1
    _said_once(refused.stdout, refused.stderr, str(folder))
