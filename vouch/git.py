"""The git adapter: the only module that runs git or imports GitPython.

Hot paths (commits through plumbing, ref listing) run the `git` executable directly —
one process per step and no import cost for a cold CLI. GitPython serves the porcelain
that is not on a hot path. Every failure becomes a `GitFailure` (exit 2) or a user error.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vouch.errors import GitFailure, UsageError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_BASE_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}


class GitCommandFailed(GitFailure):
    def __init__(self, args: list[str], returncode: int, stderr: str):
        self.args_ = args
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"git {' '.join(args[:3])} failed ({returncode}): {stderr.strip()[:500]}")


def run(
    args: list[str],
    cwd: Path | str,
    *,
    input: bytes | str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> str:
    """Run `git args` in `cwd` and return stdout as text."""
    return run_bytes(args, cwd, input=input, env=env, check=check).decode("utf-8", "replace")


def run_bytes(
    args: list[str],
    cwd: Path | str,
    *,
    input: bytes | str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> bytes:
    full_env = {**os.environ, **_BASE_ENV, **(env or {})}
    data = input.encode() if isinstance(input, str) else input
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, input=data, capture_output=True, env=full_env, check=False
        )
    except FileNotFoundError as exc:
        raise GitFailure("git is not installed or not on PATH") from exc
    if check and proc.returncode != 0:
        raise GitCommandFailed(args, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc.stdout


def toplevel(path: Path) -> Path | None:
    """The work tree containing `path`, or None when it is not inside one."""
    probe = path if path.is_dir() else path.parent
    out = run(["rev-parse", "--show-toplevel"], probe, check=False).strip()
    return Path(out) if out else None


def init_repo(path: Path) -> None:
    import git as gitpython

    try:
        gitpython.Repo.init(path)
    except gitpython.GitCommandError as exc:
        raise GitFailure(f"git init failed in {path}: {exc.stderr.strip()}") from exc


def config_value(root: Path, key: str) -> str | None:
    out = run(["config", "--get", key], root, check=False).strip()
    return out or None


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    def env(self) -> dict[str, str]:
        return {
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": self.name,
            "GIT_COMMITTER_EMAIL": self.email,
        }


class Repo:
    """Plumbing over one repository's work tree."""

    def __init__(self, root: Path):
        self.root = root

    def git(self, *args: str, input: bytes | str | None = None,
            env: Mapping[str, str] | None = None, check: bool = True) -> str:
        return run(list(args), self.root, input=input, env=env, check=check)

    # -- refs ----------------------------------------------------------------------
    def head_branch(self) -> str:
        """`refs/heads/<name>` of the checked-out branch; an error when HEAD is detached."""
        out = self.git("symbolic-ref", "-q", "HEAD", check=False).strip()
        if not out:
            raise UsageError("HEAD is detached",
                             hint="check out a branch before changing knowledge")
        return out

    def resolve(self, rev: str) -> str | None:
        out = self.git("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False).strip()
        return out or None

    def resolve_tree(self, rev: str) -> str | None:
        out = self.git("rev-parse", "-q", "--verify", f"{rev}^{{tree}}", check=False).strip()
        return out or None

    def update_ref(self, ref: str, new: str, old: str | None, message: str = "vouch") -> None:
        """Atomic compare-and-swap of `ref` from `old` (None: must not exist) to `new`."""
        self.git("update-ref", "-m", message, ref, new, old or "0" * 40)

    def delete_ref(self, ref: str, old: str | None = None) -> None:
        args = ["update-ref", "-d", ref] + ([old] if old else [])
        self.git(*args)

    def for_each_ref(self, pattern: str, fields: Iterable[str]) -> list[list[str]]:
        """One `for-each-ref` call; each row is the requested fields, split on NUL."""
        fmt = "%00".join(f"%({f})" for f in fields)
        out = self.git("for-each-ref", f"--format={fmt}", pattern)
        return [line.split("\0") for line in out.splitlines() if line]

    # -- objects --------------------------------------------------------------------
    def hash_blob(self, data: bytes) -> str:
        return run_bytes(["hash-object", "-w", "--stdin"], self.root, input=data).decode().strip()

    def hash_files(self, paths: list[Path]) -> list[str]:
        if not paths:
            return []
        listing = "\n".join(str(p) for p in paths) + "\n"
        out = self.git("hash-object", "-w", "--stdin-paths", "--no-filters", input=listing)
        return out.split()

    def ls_tree(self, tree: str) -> list[tuple[str, str, str, str]]:
        """Entries of one tree object: (mode, type, sha, name)."""
        out = run_bytes(["ls-tree", "-z", tree], self.root)
        rows = []
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, name = entry.split(b"\t", 1)
            mode, typ, sha = meta.decode().split(" ")
            rows.append((mode, typ, sha, name.decode()))
        return rows

    def mktree(self, entries: Iterable[tuple[str, str, str, str]]) -> str:
        body = b"".join(
            f"{mode} {typ} {sha}\t".encode() + name.encode() + b"\0"
            for mode, typ, sha, name in entries
        )
        return run_bytes(["mktree", "-z"], self.root, input=body).decode().strip()

    def edit_tree(self, base_tree: str | None, changes: Mapping[str, str | None]) -> str:
        """A new tree: `base_tree` with each path set to a blob sha, or removed (None).

        Only the trees on the changed paths are rewritten, so the cost follows the depth
        of the paths, not the size of the repository.
        """
        return self._edit(base_tree, {tuple(p.split("/")): b for p, b in changes.items()})

    def _edit(self, tree: str | None, changes: Mapping[tuple[str, ...], str | None]) -> str:
        entries = {e[3]: e for e in self.ls_tree(tree)} if tree else {}
        nested: dict[str, dict[tuple[str, ...], str | None]] = {}
        for parts, blob in changes.items():
            if len(parts) == 1:
                if blob is None:
                    entries.pop(parts[0], None)
                else:
                    entries[parts[0]] = ("100644", "blob", blob, parts[0])
            else:
                nested.setdefault(parts[0], {})[parts[1:]] = blob
        for name, sub in nested.items():
            current = entries.get(name)
            sub_tree = current[2] if current and current[1] == "tree" else None
            new_sub = self._edit(sub_tree, sub)
            if new_sub == EMPTY_TREE:
                entries.pop(name, None)
            else:
                entries[name] = ("040000", "tree", new_sub, name)
        if not entries:
            return EMPTY_TREE
        return self.mktree(sorted(entries.values(), key=lambda e: e[3]))

    def commit_tree(self, tree: str, parents: list[str], message: str,
                    identity: Identity | None = None) -> str:
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        env = identity.env() if identity else None
        return self.git(*args, input=message, env=env).strip()

    def cat_file(self, spec: str) -> bytes | None:
        proc = run_bytes(["cat-file", "-p", spec], self.root, check=False)
        return proc if proc else None

    def tree_entry(self, rev: str, path: str) -> str | None:
        out = self.git("rev-parse", "-q", "--verify", f"{rev}:{path}", check=False).strip()
        return out or None

    # -- the user's index and work tree -------------------------------------------------
    def stage_entries(self, entries: Mapping[str, str | None]) -> None:
        """Make the user's index hold exactly these blobs at these paths (None removes)."""
        lines = []
        for path, blob in entries.items():
            if blob is None:
                lines.append(f"0 {'0' * 40}\t{path}")
            else:
                lines.append(f"100644 {blob}\t{path}")
        self.git("update-index", "--index-info", input="\n".join(lines) + "\n")

    def identity(self) -> Identity:
        name = config_value(self.root, "user.name") or "vouch"
        email = config_value(self.root, "user.email") or "vouch@localhost"
        return Identity(name, email)
