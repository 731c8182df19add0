"""vouch's distribution name is its own (issue 34, finding 12).

`vouch` on the public package index is an unrelated project ("Curated AI search for
agents"): a template or hint that says `pip install vouch` runs a stranger's package in a
user's CI. The distribution is `vouch-git`; the import package and the command stay `vouch`.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[1]
# `pip install vouch` / `pip install 'vouch[hnsw]'` / `pip install vouch==1` — but not
# `vouch-git`, `.`, or a path
STRANGER = re.compile(r"pip install\s+['\"]?vouch(?![-\w])")


def _texts() -> list[Path]:
    found = [PROJECT / "README.md", PROJECT / "SKILL.md", PROJECT / ".pre-commit-hooks.yaml"]
    for folder in ("templates", "hooks", "vouch", ".ci", "scripts", "docs"):
        found += [
            p
            for p in (PROJECT / folder).rglob("*")
            if p.is_file()
            and p.suffix not in {".safetensors", ".json", ".pyc"}
            and "examples" not in p.parts
        ]
    return found


def test_the_distribution_is_vouch_git() -> None:
    meta = tomllib.loads((PROJECT / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "vouch-git"
    assert meta["project"]["scripts"] == {"vouch": "vouch.launch:run"}


def test_no_template_or_hint_installs_the_stranger() -> None:
    offenders = []
    for path in _texts():
        text = path.read_text(encoding="utf-8", errors="replace")
        offenders += [
            f"{path.relative_to(PROJECT)}: {line.strip()}"
            for line in text.splitlines()
            # a line may name the stranger only to warn about it
            if STRANGER.search(line) and "unrelated" not in line
        ]
    assert offenders == []


def _install_steps() -> list[str]:
    workflow = yaml.safe_load((PROJECT / "templates" / "vouch-ci.yml").read_text())
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    return [s["run"] for s in steps if s.get("name") == "Install vouch"]


@pytest.mark.parametrize(
    ("spec", "installs"),
    [
        ("", False),  # unset: refused, never a guess
        ("vouch", False),
        ("vouch==0.2.4", False),
        ("vouch[hnsw]", False),
        ("vouch-git==0.1.0", True),
        ("vouch-git @ git+https://example.invalid/vouch.git@v0.1.0", True),
    ],
)
def test_the_ci_template_installs_only_what_the_team_named(
    tmp_path: Path, spec: str, installs: bool
) -> None:
    """Each job's install step, run by bash as the runner would, with `pip` on PATH a
    script that records what it was asked to install."""
    runs = _install_steps()
    assert len(runs) == 2
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "asked"
    pip = bin_dir / "pip"
    pip.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {record}\n')
    pip.chmod(0o755)
    for run in runs:
        record.unlink(missing_ok=True)
        proc = subprocess.run(
            ["bash", "-e", "-c", run],
            env={"PATH": f"{bin_dir}:/usr/bin:/bin", "VOUCH_PIP_SPEC": spec},
            capture_output=True,
            text=True,
        )
        if installs:
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert record.read_text().splitlines() == ["install", spec]
        else:
            assert proc.returncode == 1
            assert "::error::" in proc.stdout
            assert not record.exists()
