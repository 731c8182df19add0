"""What every example shares: a scratch directory with its own git identity, the vouch CLI
run as a user runs it, and checks that stop the example with exit status 1.

Each example is `run(main)`: main gets a Scratch, narrates with `say`, and fails with
`check` (or a command that exits other than expected). Nothing outside the scratch
directory is touched: git reads a config file written there (GIT_CONFIG_GLOBAL), never
yours.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

SOURCES = Path(__file__).resolve().parent / "sources"  # three documents about billing
AUTHOR = "Ada Author"  # git's user.name in the scratch directory: who proposes
REVIEWER = "Rita Reviewer"  # a second person at the same machine: who approves
REVIEWER_EMAIL = "rita@example.invalid"


class ExampleFailed(Exception):
    """Something the example expected did not happen."""


def check(condition: object, message: str) -> None:
    if not condition:
        raise ExampleFailed(message)


def say(text: str) -> None:
    print(text, flush=True)


class Scratch:
    """A temporary directory with a private git config, and the commands run in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        gitconfig = root / "gitconfig"
        gitconfig.write_text(
            f"[user]\n\tname = {AUTHOR}\n\temail = ada@example.invalid\n"
            "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
            "[advice]\n\tdetachedHead = false\n"
        )
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("VOUCH_", "GIT_", "PRE_COMMIT"))
        }
        self.env |= {"GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1"}

    def run(
        self,
        argv: list[str],
        cwd: Path,
        expect: int = 0,
        input: str | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env={**self.env, **(env or {})},
            input=input,
            capture_output=True,
            text=True,
        )
        shown = " ".join(argv[2:] if argv[0] == sys.executable else argv)
        check(
            proc.returncode == expect,
            f"`{shown}` exited {proc.returncode}, expected {expect}:\n{proc.stdout}{proc.stderr}",
        )
        return proc

    def vouch(self, *args: str, cwd: Path, expect: int = 0) -> str:
        """`vouch ARGS` in cwd (this interpreter's vouch, so a virtualenv works); stdout.
        A non-zero `expect` returns stdout and stderr together."""
        proc = self.run([sys.executable, "-m", "vouch", *args], cwd, expect)
        return proc.stdout if expect == 0 else proc.stdout + proc.stderr

    def as_reviewer(self, *args: str, cwd: Path, expect: int = 0) -> str:
        """`vouch ARGS` run by Rita, as git knows her (GIT_COMMITTER_NAME/EMAIL): who
        acts is a git identity, never a name typed with --as."""
        who = {"GIT_COMMITTER_NAME": REVIEWER, "GIT_COMMITTER_EMAIL": REVIEWER_EMAIL}
        proc = self.run([sys.executable, "-m", "vouch", *args], cwd, expect, env=who)
        return proc.stdout if expect == 0 else proc.stdout + proc.stderr

    def review(self, *proposal_ids: str, cwd: Path) -> None:
        """Rita reads each proposal (`vouch show`), which pins the commit she approves."""
        for pid in proposal_ids:
            self.as_reviewer("show", pid, cwd=cwd)

    def vouch_json(self, *args: str, cwd: Path) -> Any:
        return json.loads(self.vouch(*args, "--json", cwd=cwd))

    def git(self, *args: str, cwd: Path) -> str:
        return self.run(["git", *args], cwd).stdout

    def knowledge_base(self, name: str, *documents: str) -> Path:
        """A new git repository with `vouch init` done and DOCUMENTS (file names in
        examples/sources/) copied into its docs/ folder, not yet registered."""
        repo = self.root / name
        repo.mkdir()
        self.git("init", "-q", cwd=repo)
        self.vouch("init", cwd=repo)
        (repo / "docs").mkdir()
        for doc in documents:
            shutil.copy(SOURCES / doc, repo / "docs" / doc)
        return repo


def run(example: Callable[[Scratch], None]) -> NoReturn:
    """Run EXAMPLE in a new scratch directory, removed afterwards; exit 0 when every
    check held, else print what failed and exit 1."""
    with tempfile.TemporaryDirectory(prefix="vouch-example-") as tmp:
        try:
            example(Scratch(Path(tmp)))
        except ExampleFailed as failure:
            print(f"FAILED: {failure}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None
    say("OK")
    raise SystemExit(0)
