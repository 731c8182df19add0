"""Helpers shared by the review-gate tests (tests/test_gate_*.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import git

from vouch.git import Repo
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.kb import KB, PROPOSAL_PREFIX

ALICE = "alice"  # an agent (declared through the library's `agent`)
BOB = "bob"  # another agent, or a label (`--as bob`) beside the git user
PERSON = "Test Person"  # the git user of the test repositories (conftest)
PERSON_EMAIL = "test@example.invalid"


def ctx(kb: KB, actor: str = ALICE) -> CallContext:
    """A library caller acting as the declared agent `actor` (run by the git user)."""
    return CallContext(kb_path=str(kb.root), agent=actor)


def call(kb: KB, method: str, params: dict[str, Any] | None = None, actor: str = ALICE) -> Any:
    return ops.invoke(ctx(kb, actor), method, params or {})


def a_source(kb: KB) -> str:
    """The id of one registered example source (deploy-runbook.md)."""
    rows = call(kb, "kb.list_sources", {"filter": {"title": "deploy-runbook.md"}})
    return rows[0]["id"]


def retry_claim(kb: KB, text: str = "Retry budget is five.") -> dict[str, Any]:
    """`docs/retry.md` committed and registered, and a valid proposal of `text` citing its
    line 1: the proposal's result."""
    (kb.root / "docs").mkdir()
    (kb.root / "docs" / "retry.md").write_text("retry budget is five attempts\n")
    git(kb.root, "add", "docs")
    git(kb.root, "commit", "-qm", "docs")
    call(kb, "kb.register_source_from_path", {"path": "docs/retry.md"})
    made = call(kb, "kb.propose_claim", {"text": text, "evidence": ["docs/retry.md:L1"]})
    assert made["valid"], made
    return dict(made)


def propose_claim(
    kb: KB,
    text: str = "Deploys need a green CI run",
    actor: str = ALICE,
    *,
    shown: bool = True,
    **extra: Any,
) -> str:
    """A claim proposed by the agent `actor`; unless `shown` is False, a reviewer then
    looks at it (`vouch show`), which pins the commit approve may land."""
    result = call(
        kb, "kb.propose_claim", {"text": text, "evidence": [a_source(kb)], **extra}, actor=actor
    )
    assert result["valid"], result
    pid = str(result["proposal_id"])
    if shown:
        show(kb, pid)
    return pid


def proposed(
    kb: KB, method: str, params: dict[str, Any], actor: str = ALICE, *, shown: bool = True
) -> Any:
    """`call` of a kb.propose_* method by the agent `actor`; a valid proposal is then
    shown to a reviewer (`vouch show`), pinning it, unless `shown` is False."""
    result = call(kb, method, params, actor=actor)
    if shown and isinstance(result, dict) and result.get("proposal_id"):
        show(kb, str(result["proposal_id"]))
    return result


def show(kb: KB, *proposal_ids: str) -> None:
    """`vouch show` of each proposal at the CLI: the reviewer's look that pins its commit
    (refs/vouch/reviewed/<id>)."""
    for pid in proposal_ids:
        ops.invoke(CallContext(kb_path=str(kb.root)), "kb.read_proposal", {"id": pid})


def branches(root: Path) -> list[str]:
    out = git(root, "for-each-ref", "--format=%(refname)", PROPOSAL_PREFIX)
    return out.split()


def head(root: Path, rev: str = "HEAD") -> str:
    return git(root, "rev-parse", rev).strip()


def make_user_mess(root: Path) -> None:
    """Staged, unstaged and untracked changes that the gate must leave exactly alone."""
    (root / "staged.txt").write_text("staged work\n")
    git(root, "add", "staged.txt")
    (root / "README.md").write_text("unstaged edit\n")
    (root / "untracked.txt").write_text("scratch\n")


def user_state(root: Path) -> tuple[str, str, str]:
    """status, staged diff and unstaged diff outside .vouch/ — what the user sees."""
    status = git(root, "status", "--porcelain", "--untracked-files=all", "--", ":!.vouch")
    return (
        status,
        git(root, "diff", "--cached", "--", ":!.vouch"),
        git(root, "diff", "--", ":!.vouch"),
    )


def vouch_proc(
    root: Path, *args: str, env: dict[str, str] | None = None, wait: bool = True
) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    """Run the real `python -m vouch` in `root`, as users and hooks do."""
    full_env = {**os.environ, **(env or {})}
    cmd = [sys.executable, "-m", "vouch", *args]
    if not wait:
        return subprocess.Popen(
            cmd, cwd=root, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    return subprocess.run(cmd, cwd=root, env=full_env, capture_output=True, text=True, timeout=120)


def write_files(root: Path, changes: dict[str, str | None]) -> dict[str, str | None]:
    """Write (or delete, None) work-tree files and store their blobs: path -> blob."""
    repo = Repo(root)
    blobs: dict[str, str | None] = {}
    for rel, text in changes.items():
        path = root / rel
        if text is None:
            path.unlink(missing_ok=True)
            blobs[rel] = None
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            blobs[rel] = repo.write_blob(text.encode())
    return blobs


def recommit(
    root: Path, ref: str, message: str, author: tuple[str, str], tree: str | None = None
) -> tuple[str, str]:
    """Replace the commit at `ref` by one with the same parent (and tree, or `tree`),
    `message` and `author` (name, email), built with plumbing as a proposer could:
    (old, new)."""
    old = git(root, "rev-parse", ref).strip()
    env = {**os.environ, "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1]}
    new = subprocess.run(
        ["git", "commit-tree", tree or f"{old}^{{tree}}", "-p", f"{old}^", "-m", message],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    git(root, "update-ref", ref, new, old)
    return old, new


def proposer_key(root: Path) -> dict[str, str]:
    """Environment that signs commits with a key of the proposer's own (made once beside
    the repository), not the reviewer's key this clone is configured with: under
    `review.require_signed_decisions` a proposal must be signed, and by another key than
    the decision's. The key is listed for the test person (who runs the agents) in the
    allowed signers file the clone's git trusts, when that is outside the repository."""
    key = root.parent / "proposer-key"
    if not key.exists():
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", str(key)],
            check=True,
            capture_output=True,
        )
    trusted = subprocess.run(
        ["git", "config", "--get", "gpg.ssh.allowedSignersFile"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if trusted and not Path(trusted).resolve().is_relative_to(root.resolve()):
        entry = f"{PERSON_EMAIL} {key.with_suffix('.pub').read_text()}"
        listed = Path(trusted).read_text() if Path(trusted).exists() else ""
        if entry not in listed:
            with open(trusted, "a") as fh:
                fh.write(entry)
    return {
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "user.signingkey",
        "GIT_CONFIG_VALUE_0": str(key),
        "GIT_CONFIG_KEY_1": "gpg.format",
        "GIT_CONFIG_VALUE_1": "ssh",
    }


def bounded_vouch(
    root: Path, *args: str, limit: int = 1 << 30, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The real `python -m vouch` with its address space capped at `limit` bytes: a read
    without end dies there, not the machine (no warm process: it is the command measured)."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "vouch", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "VOUCH_NO_WARM": "1"},
        preexec_fn=cap,
    )


def keypair(folder: Path, name: str) -> Path:
    """A throwaway SSH key `folder/key-<name>` (made once), its comment `name`."""
    key = folder / f"key-{name}"
    if not key.exists():
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)],
            check=True,
            capture_output=True,
        )
    return key


def vouch_forked(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`vouch ARGS` in `root` as a forked child of this test process, with `env` added to
    its environment: a real process that dies where VOUCH_FAULT says (`os._exit(86)`,
    the kill stand-in), with its exit status, stdout and stderr as `vouch_proc` gives
    them — without an interpreter start and vouch's imports (vouch is loaded here). For
    the fault-injection tests; `vouch_proc` stays for what is about the console script's
    own process (hooks, signals, servers)."""
    import tempfile
    import traceback

    from vouch.cli import main

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 70
            try:
                os.chdir(root)
                os.environ.update(env or {})
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdin = open(os.devnull)  # noqa: SIM115 — the child ends with os._exit
                sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
                code = main(list(args))
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else 1
            except BaseException:  # as an interpreter would: the traceback, status 1
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        returncode = os.waitstatus_to_exitcode(status)
        return subprocess.CompletedProcess(
            ["vouch", *args], returncode, out.read().decode(), err.read().decode()
        )
