"""Every script in examples/ runs green, as a user runs it: a subprocess of this
interpreter with the hermetic environment of conftest (its own HOME and git config), on
the vouch under test. And a failing step makes an example exit 1, saying what failed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import vouch

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(p for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def run_example(script: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    here = str(Path(vouch.__file__).resolve().parents[1])  # the vouch these tests import
    path = os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_there_are_examples() -> None:
    assert len(SCRIPTS) >= 8
    readme = (EXAMPLES / "README.md").read_text()
    for script in SCRIPTS:
        assert f"`{script.name}`" in readme, f"examples/README.md does not list {script.name}"
        assert script.read_text().startswith("#!/usr/bin/env python3\n")
        assert os.access(script, os.X_OK), f"{script.name} is not executable"


def runs_green(script: Path, tmp_path: Path) -> None:
    proc = run_example(script, tmp_path)
    assert proc.returncode == 0, (
        f"{script.name} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    )
    assert proc.stdout.rstrip().endswith("OK")
    assert list(tmp_path.iterdir()) == []  # it worked in its own temporary directory


# Two classes, so the suite's `--dist loadscope` (one worker a module or class) can run
# the halves on two workers: together the examples take about a minute.
HALVES = (SCRIPTS[::2], SCRIPTS[1::2])


class TestExamplesOneHalf:
    @pytest.mark.parametrize("script", HALVES[0], ids=[p.stem for p in HALVES[0]])
    def test_example_runs_green(self, script: Path, tmp_path: Path) -> None:
        runs_green(script, tmp_path)


class TestExamplesOtherHalf:
    @pytest.mark.parametrize("script", HALVES[1], ids=[p.stem for p in HALVES[1]])
    def test_example_runs_green(self, script: Path, tmp_path: Path) -> None:
        runs_green(script, tmp_path)


BROKEN = {
    "a_command_fails": (
        'kb = s.knowledge_base("kb")\n    s.vouch("show", "no-such-claim", cwd=kb)',
        "FAILED: `vouch show no-such-claim` exited 1, expected 0:",
    ),
    "a_check_fails": (
        'check(s.vouch_json("pending", cwd=s.knowledge_base("kb")), "nothing pending")',
        "FAILED: nothing pending",
    ),
}


@pytest.mark.parametrize("body,said", BROKEN.values(), ids=BROKEN.keys())
def test_a_failing_step_exits_1(tmp_path: Path, body: str, said: str) -> None:
    script = tmp_path / "broken.py"
    script.write_text(
        f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\n"
        "from _helpers import check, run\n\n"
        f"def main(s):\n    {body}\n    print('not reached')\n\nrun(main)\n"
    )
    proc = run_example(script, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert said in proc.stderr and "not reached" not in proc.stdout
    assert not proc.stdout.rstrip().endswith("OK")
