"""Progress on long work (issue 16.2): the core reports stages to a callback the caller
passes (`CallContext.progress`), and the CLI draws them with tqdm on stderr when it is a
terminal — a real pseudo-terminal here — and never through a pipe or under --json."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from conftest import script

from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.search.eval import GoldenQuery, evaluate
from vouch.store.initkb import init_kb
from vouch.store.kb import KB


class Heard:
    """A progress callback that remembers what it heard."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.calls.append((stage, done, total))

    @property
    def stages(self) -> list[str]:
        return list(dict.fromkeys(stage for stage, _, _ in self.calls))


def _invoke(kb: KB, method: str, params: dict[str, object]) -> tuple[object, Heard]:
    heard = Heard()
    ctx = CallContext(kb_path=str(kb.root), progress=heard)
    return ops.invoke(ctx, method, params), heard


def test_long_operations_report_their_stages(kb_with_sources: KB, tmp_path: Path) -> None:
    kb = kb_with_sources
    _, heard = _invoke(kb, "kb.search", {"query": "rollback"})  # the first: builds the index
    assert heard.stages[:2] == ["indexing: reading", "indexing: embedding"]
    assert ("indexing: reading", 3, 3) in heard.calls
    _, heard = _invoke(kb, "kb.index_rebuild", {})
    assert heard.stages == ["indexing: reading", "indexing: embedding", "indexing: writing"]
    for method in ("kb.lint", "kb.doctor"):
        _, heard = _invoke(kb, method, {})
        assert heard.stages == ["checking"] and heard.calls[-1][1] == heard.calls[-1][2]

    bundle = tmp_path / "kb.tar.gz"
    _, heard = _invoke(kb, "kb.export", {"out": str(bundle)})
    assert heard.stages == ["reading", "checking", "packing"]
    target = tmp_path / "other"
    target.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=target, check=True)
    init_kb(target)
    _, heard = _invoke(KB.open(target), "kb.import_apply", {"path": str(bundle)})
    assert heard.stages[:2] == ["unpacking", "checking"]
    assert {"storing", "writing files"} <= set(heard.stages)

    golden = [GoldenQuery(query="rollback", relevant=frozenset({"x"}))]
    heard = Heard()
    evaluate(golden, lambda query, mode: [], ["fts"], heard)
    assert heard.calls == [("evaluating fts", 0, 1), ("evaluating fts", 1, 1)]


# -- on a terminal ---------------------------------------------------------------------------
def _folder(root: Path) -> None:
    docs = root / "docs"
    docs.mkdir(exist_ok=True)
    for n in range(3):
        (docs / f"note-{n}.md").write_text(f"# Note {n}\n\nDeploys roll back in step {n}.\n")


def _run(kb: KB, args: list[str], *, terminal: bool, sized: bool = True) -> tuple[str, str]:
    """`vouch ARGS` with stderr on a pseudo-terminal (80x24, or of no size, as `script`
    and CI runners make them) or a pipe: (stdout, stderr)."""
    cmd = [sys.executable, "-m", "vouch", *args, "--kb", str(kb.root)]
    if not terminal:
        done = subprocess.run(cmd, cwd=kb.root, capture_output=True, text=True, check=True)
        return done.stdout, done.stderr
    leader, follower = pty.openpty()
    if sized:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(
        cmd, cwd=kb.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower
    )
    os.close(follower)
    seen = script("readme_walkthrough").drain(leader)
    stdout = proc.stdout.read().decode() if proc.stdout else ""
    assert proc.wait() == 0, seen
    return stdout, seen.decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_progress_is_drawn_on_a_terminal_only(kb: KB) -> None:
    _folder(kb.root)
    # stderr is the terminal, stdout a pipe that asked for human text
    out, err = _run(kb, ["source", "add", "docs", "-r", "--format", "human"], terminal=True)
    assert "Registering:" in err and "3/3" not in out and "%|" in err
    assert len(out.splitlines()) == 3  # the sources, without a bar among them
    out, err = _run(kb, ["index", "rebuild", "--format", "human"], terminal=True, sized=False)
    assert "Indexing: reading:" in err and "Indexing: writing..." in err
    assert out.startswith("Indexed ")

    out, err = _run(kb, ["index", "rebuild", "--json"], terminal=True)
    assert "Indexing" not in err and err.strip() == ""
    assert out.startswith("{")
    out, err = _run(kb, ["index", "rebuild"], terminal=False)
    assert "Indexing" not in err and "\r" not in err
