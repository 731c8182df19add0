"""The hooks: `vouch hooks install` (a plain git pre-commit hook), the script in hooks/,
`.pre-commit-hooks.yaml` run by the real pre-commit framework, and the CI template."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import git
from gate_support import a_source

from vouch.health import hooks
from vouch.kinds import claim as claim_kind
from vouch.store.kb import KB

PROJECT = Path(__file__).resolve().parent.parent


def hook_path(kb: KB) -> Path:
    return kb.root / ".git" / "hooks" / "pre-commit"


def uncited_claim(kb: KB) -> Path:
    """A claim file written by hand that cites nothing: what the hooks must stop."""
    from vouch.core import yamlio

    obj = claim_kind.new(text="Trust me on this", evidence=[a_source(kb)])
    text = yamlio.edit_yaml(claim_kind.dump(obj), {"evidence": []})
    path = kb.dir / claim_kind.path_for(obj["id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    assert "evidence: []" in text
    return path


def test_the_script_in_hooks_is_the_template(tmp_path: Path) -> None:
    shipped = PROJECT / "hooks" / "pre-commit"
    assert shipped.read_text() == hooks.render()
    assert shipped.stat().st_mode & stat.S_IXUSR


def test_install_writes_an_executable_hook_and_updates_its_own(
    kb_with_sources: KB, run_cli: Any
) -> None:
    res = run_cli("hooks", "install", cwd=kb_with_sources.root)
    assert res.code == 0 and "Installed" in res.out
    path = hook_path(kb_with_sources)
    assert path.stat().st_mode & stat.S_IXUSR
    text = path.read_text()
    assert hooks.MARKER in text and sys.executable in text and "VOUCH_KB_DIR=.vouch" in text
    again = run_cli("hooks", "install", "--json")
    assert again.code == 0 and '"updated": true' in again.out


def test_install_refuses_a_foreign_hook_unless_forced(kb_with_sources: KB, run_cli: Any) -> None:
    path = hook_path(kb_with_sources)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho mine\n")
    path.chmod(0o755)
    res = run_cli("hooks", "install", cwd=kb_with_sources.root)
    assert res.code == 1 and "did not write" in res.err and "--force" in res.err
    assert path.read_text() == "#!/bin/sh\necho mine\n"
    forced = run_cli("hooks", "install", "--force")
    assert forced.code == 0 and "pre-commit.legacy" in forced.out
    assert (path.parent / "pre-commit.legacy").read_text() == "#!/bin/sh\necho mine\n"
    assert hooks.MARKER in path.read_text()


def test_installed_hook_fails_a_commit_of_an_uncited_claim(
    kb_with_sources: KB, run_cli: Any
) -> None:
    root = kb_with_sources.root
    assert run_cli("hooks", "install", cwd=root).code == 0
    legacy = hook_path(kb_with_sources).parent / "pre-commit.legacy"
    legacy.write_text(f"#!/bin/sh\ntouch '{root / 'legacy-ran'}'\n")
    legacy.chmod(0o755)
    (root / "notes.txt").write_text("no knowledge staged\n")
    git(root, "add", "notes.txt")
    git(root, "commit", "-qm", "code only")  # the hook passes at once
    assert (root / "legacy-ran").exists()
    path = uncited_claim(kb_with_sources)
    git(root, "add", str(path))
    proc = subprocess.run(
        ["git", "commit", "-m", "sneak a claim in"], cwd=root, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "error[uncited]" in proc.stderr + proc.stdout
    assert "error[no-decision]" in proc.stderr + proc.stdout
    assert git(root, "log", "-1", "--format=%s").strip() == "code only"


def test_the_ci_template_runs_lint_since_the_base_and_doctor() -> None:
    workflow = yaml.safe_load((PROJECT / "templates" / "vouch-ci.yml").read_text())
    assert "pull_request" in workflow[True] and "push" in workflow[True]
    steps = workflow["jobs"]["review-proof"]["steps"]
    runs = "\n".join(str(s.get("run", "")) for s in steps)
    assert 'vouch lint --since "${{ steps.base.outputs.base }}"' in runs
    assert "vouch doctor" in runs and "vouch/proposal/*" in runs
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0


def test_pre_commit_hooks_manifest() -> None:
    manifest = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in manifest}
    # pre-commit reads a hook's output through a pipe and shows it to a person
    assert by_id["vouch-lint"]["entry"] == "vouch lint --staged --format human"
    assert by_id["vouch-export-check"]["entry"] == "vouch export-check --format human"
    assert by_id["vouch-lint"]["pass_filenames"] is False
    assert by_id["vouch-export-check"]["files"] == r"\.tar\.gz$"
    assert all(h["language"] == "python" for h in manifest)


# -- the real pre-commit framework ---------------------------------------------------------------
def _run_hook(snapshot: Path, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The pre-commit framework's `run` of the snapshot's vouch-lint hook in `root`, from a
    configuration naming the snapshot at its commit, as a user's .pre-commit-config.yaml
    would: the hook's environment is built once in PRE_COMMIT_HOME and reused by the next
    run (`try-repo` would build it again, in a new store, each time)."""
    config = snapshot.parent / "pre-commit-config.yaml"
    if not config.exists():
        rev = git(snapshot, "rev-parse", "HEAD").strip()
        hook = {"repo": str(snapshot), "rev": rev, "hooks": [{"id": "vouch-lint"}]}
        config.write_text(yaml.safe_dump({"repos": [hook]}))
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--config", str(config), "vouch-lint"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _snapshot(dest: Path) -> None:
    """This work tree's hook manifest and package as a repository of its own: pre-commit
    needs committed files, and the snapshot holds exactly what would be committed."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(PROJECT / name, dest / name)
    shutil.copytree(PROJECT / "hooks", dest / "hooks")
    # the embedding model is package data lint never loads: left out to keep it small
    shutil.copytree(
        PROJECT / "vouch", dest / "vouch", ignore=shutil.ignore_patterns("__pycache__", "models")
    )
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "snapshot")


def _dependency_path(dest: Path) -> Path:
    """The packages vouch imports, from this interpreter, without vouch itself and the
    build tools (the hook's environment builds vouch with its own setuptools)."""
    dest.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    skip = (
        "setuptools",
        "pkg_resources",
        "_distutils_hack",
        "pip",
        "distutils-precedence",
        "__editable__",
        "vouch",
        "_virtualenv",
    )
    for entry in site.iterdir():
        if not entry.name.startswith(skip) and entry.suffix != ".pth":
            (dest / entry.name).symlink_to(entry)
    return dest


@pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None,
    reason="the pre-commit framework is not installed (pip install pre-commit)",
)
def test_pre_commit_framework_runs_vouch_lint_and_fails_an_uncited_claim(
    kb_with_sources: KB, tmp_path: Path
) -> None:
    """`pre-commit run` builds the hook's environment from this repository (pip,
    offline: dependencies come from this interpreter's packages) and runs vouch-lint on
    the staged files of a knowledge base, as it would for a commit."""
    snapshot = tmp_path / "vouch-snapshot"
    _snapshot(snapshot)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PIP_NO_INDEX": "1",
        "PIP_NO_DEPS": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
        "PYTHONPATH": str(_dependency_path(tmp_path / "deps")),
    }
    root = kb_with_sources.root
    path = uncited_claim(kb_with_sources)
    git(root, "add", str(path))
    proc = _run_hook(snapshot, root, env)
    out = proc.stdout + proc.stderr
    if "An unexpected error has occurred" in out and "Installing environment" in out:
        pytest.skip(
            "pre-commit could not build the hook's environment offline: "
            + out.strip().splitlines()[-1][:300]
        )
    assert proc.returncode == 1, out
    assert "vouch lint (staged knowledge files)" in out and "Failed" in out
    assert "error[uncited]" in out and "error[no-decision]" in out
    # the same hook passes a commit that stages no knowledge file
    git(root, "reset", "-q")
    (root / "notes.txt").write_text("code\n")
    git(root, "add", "notes.txt")
    proc = _run_hook(snapshot, root, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # and refuses a hand edit of approved knowledge (a promotion typed into the file)
    from gate_support import BOB, call, propose_claim

    pid = propose_claim(kb_with_sources, "Deploys need a green CI run")
    cid = call(kb_with_sources, "kb.approve", {"proposal_id": pid}, actor=BOB)["object_id"]
    path = kb_with_sources.dir / claim_kind.path_for(cid)
    path.write_text(path.read_text().replace("status: working", "status: stable"))
    git(root, "add", str(path))
    proc = _run_hook(snapshot, root, env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "error[hand-edit]" in out and "--no-verify" in out
