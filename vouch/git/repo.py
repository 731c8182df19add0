"""`Repo`: plumbing over one repository's work tree — refs, trees, commits, merges, and
the user's index kept in step for the few paths vouch changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from vouch.errors import Conflict, GitFailure, UsageError
from vouch.git.command import (
    Started,
    config_value,
    run,
    run_bytes,
    start,
)
from vouch.git.objects import ObjectStore, format_tree, parse_tree
from vouch.git.worktree import WorkTree

if TYPE_CHECKING:
    from vouch.git import ident
    from vouch.git import index_file as gitindex


class Repo(WorkTree):
    """Plumbing over one repository's work tree."""

    def __init__(self, root: Path):
        self.root = root
        self._index_snapshot: gitindex.Index | None = None
        self._signed: (
            tuple[tuple[str | None, ...], tuple[ident.Signature, ident.Signature]] | None
        ) = None

    def git(
        self,
        *args: str,
        input: bytes | str | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> str:
        return run(list(args), self.root, input=input, env=env, check=check)

    def start(self, *args: str) -> Started:
        """`git args` running in the background; read it with `.output()`."""
        return start(list(args), self.root)

    # -- refs ----------------------------------------------------------------------
    def head_branch(self) -> str:
        """`refs/heads/<name>` of the checked-out branch; an error when HEAD is detached."""
        branch = self.current_branch()
        if branch is None:
            raise UsageError(
                "HEAD is detached", hint="check out a branch before changing knowledge"
            )
        return branch

    def current_branch(self) -> str | None:
        """`refs/heads/<name>` checked out here, or None when HEAD is detached.

        Read from the HEAD file itself (no process); anything unexpected asks git.
        """
        try:
            text = self.store.head_file.read_text(encoding="utf-8").strip()
        except OSError:
            text = ""
        if text.startswith("ref: refs/heads/"):
            return text[5:]
        if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
            return None
        return self.git("symbolic-ref", "-q", "HEAD", check=False).strip() or None

    def resolve(self, rev: str) -> str | None:
        out = self.git("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False).strip()
        return out or None

    def peek(self, ref: str) -> str | None:
        """The commit a full ref name points at, read through the long-lived cat-file
        (git re-reads refs per request, so this is as fresh as rev-parse, minus a fork)."""
        found = self.store.info(ref)
        return found[0] if found and found[1] == "commit" else None

    def update_ref(
        self, ref: str, new: str, old: str | None, message: str = "vouch", *, force: bool = False
    ) -> None:
        """Atomic compare-and-swap of `ref` from `old` (None: must not exist) to `new`;
        with `force`, whatever `ref` held (a bookmark, not a decision)."""
        expected = [] if force else [old or self.store.null_id]
        self.git("update-ref", "-m", message, ref, new, *expected)

    def for_each_ref(self, pattern: str, fields: Iterable[str]) -> list[list[str]]:
        """One `for-each-ref` call; each row is the requested fields, split on NUL."""
        fmt = "%00".join(f"%({f})" for f in fields)
        out = self.git("for-each-ref", f"--format={fmt}", pattern)
        return [line.split("\0") for line in out.splitlines() if line]

    def ref_records(
        self, patterns: Iterable[str], fields: Iterable[str], options: Iterable[str] = ()
    ) -> list[list[str]]:
        """Like for_each_ref, but fields may hold newlines (e.g. `contents`)."""
        fmt = "%00".join(f"%({f})" for f in fields) + "%01"
        out = self.git("for-each-ref", f"--format={fmt}", *options, *patterns)
        return [rec.lstrip("\n").split("\0") for rec in out.split("\x01") if rec.strip("\n")]

    # -- objects --------------------------------------------------------------------
    def hash_files(self, paths: Iterable[Path | str], *, write: bool = True) -> list[str]:
        """Blob ids of work-tree files (no clean filters), stored unless `write` is False."""
        listing = "".join(f"{p}\n" for p in paths)
        if not listing:
            return []
        args = ["hash-object", *(["-w"] if write else []), "--stdin-paths", "--no-filters"]
        return self.git(*args, input=listing).split()

    @cached_property
    def store(self) -> ObjectStore:
        return ObjectStore(self.root)

    @property
    def empty_tree(self) -> str:
        """The empty tree's id in this repository's object format."""
        return self.store.empty_tree

    def blob_id(self, data: bytes) -> str:
        """The id `data` has as a blob here (nothing written): the repository's hash."""
        return self.store.hash("blob", data)

    def ls_tree(self, tree: str) -> list[tuple[str, str, str, str]]:
        """Entries of one tree object: (mode, type, sha, name), parsed in-process."""
        cache = self.store._trees
        rows = cache.get(tree)
        if rows is None:
            found = self.store.read(tree)
            if found is None or found[0] != "tree":
                raise GitFailure(f"{tree} is not a tree object")
            rows = parse_tree(found[1], self.store.width)
            if len(cache) > 4096:  # trees are immutable; the bound only caps memory
                cache.clear()
            if len(tree) in (40, 64):  # a name like HEAD^{tree} moves: never cache it
                cache[tree] = rows
        return list(rows)

    def mktree(self, entries: Iterable[tuple[str, str, str, str]]) -> str:
        return self.store.write("tree", format_tree(entries))

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
            if new_sub == self.empty_tree:
                entries.pop(name, None)
            else:
                entries[name] = ("040000", "tree", new_sub, name)
        if not entries:
            return self.empty_tree
        return self.mktree(sorted(entries.values(), key=lambda e: e[3]))

    def tree_entry(self, rev: str, path: str) -> str | None:
        out = self.git("rev-parse", "-q", "--verify", f"{rev}:{path}", check=False).strip()
        return out or None

    def signatures(self) -> tuple[ident.Signature, ident.Signature]:
        """(author, committer) as `git commit` would sign here; asked of git once per
        environment (see `ident`)."""
        from vouch.git import ident  # only writers sign: a read never imports it

        key = ident.env_key()
        if self._signed is None or self._signed[0] != key:
            self._signed = key, ident.signatures(self.root)
        return self._signed[1]

    # -- the review gate's plumbing -----------------------------------------------------
    def read_blob(self, sha: str) -> bytes:
        found = self.store.read(sha)
        if found is None or found[0] != "blob":
            raise GitFailure(f"{sha} is not a blob")
        return found[1]

    def read_blobs(self, shas: list[str]) -> list[bytes]:
        """`read_blob` for many, pipelined through one cat-file round trip per chunk."""
        out = []
        for sha, found in zip(shas, self.store.read_many(shas), strict=True):
            if found is None or found[0] != "blob":
                raise GitFailure(f"{sha} is not a blob")
            out.append(found[1])
        return out

    def blob_at(self, tree: str, path: str) -> str | None:
        """The blob sha at `path` inside `tree` (a tree or commit sha), walking in-process.
        Conflict when a folder on the way is a file or a link in `tree`: nothing can be
        written below it."""
        sha = self.store.peel_tree(tree)
        parts = path.split("/")
        for n, part in enumerate(parts):
            if sha is None:
                return None
            entry = next((e for e in self.ls_tree(sha) if e[3] == part), None)
            if entry is not None and n < len(parts) - 1 and entry[1] != "tree":
                folder = "/".join(parts[: n + 1])
                raise Conflict(
                    f"{folder} is a {'link' if entry[0] == '120000' else 'file'} in this "
                    "branch where vouch keeps a folder",
                    hint=f"remove it (`git rm {folder}`), commit, and run the command again; "
                    "nothing was changed",
                )
            sha = entry[2] if entry else None
        return sha

    def write_blob(self, data: bytes) -> str:
        return self.store.write("blob", data)

    def write_commit(
        self, tree: str, parents: list[str], message: str, author: tuple[str, str] | None = None
    ) -> str:
        """A commit object written in-process: the bytes `git commit-tree` would write in
        the same environment (identity, GIT_*_DATE, local timezone). With
        `commit.gpgSign` set, git writes and signs it (`git commit-tree -S`: GPG or SSH,
        as `git commit` would). `author` (name, email) replaces git's author — a declared
        agent authors what its operator commits."""
        if self.signs_commits():
            args = ["commit-tree", tree, *(a for p in parents for a in ("-p", p)), "-S"]
            env = {"GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1]} if author else None
            return self.git(*args, input=message, env=env).strip()
        from vouch.git import ident

        signed_author, committer = self.signatures()
        if author is not None:
            signed_author = ident.Signature(f"{author[0]} <{author[1]}>", signed_author.date)
        now = ident.now_stamp()
        lines = [
            f"tree {tree}",
            *(f"parent {p}" for p in parents),
            f"author {signed_author.line(now)}",
            f"committer {committer.line(now)}",
            "",
            message,
        ]
        body = "\n".join(lines)
        return self.store.write(
            "commit", body.encode() if body.endswith("\n") else (body + "\n").encode()
        )

    def identity(self) -> tuple[str, str]:
        """(name, email) of whoever commits here, as `git var GIT_COMMITTER_IDENT` says."""
        who = self.signatures()[1].who
        name, _, email = who.removesuffix(">").rpartition(" <")
        return name.strip(), email.strip()

    def signing_key(self, commit: str) -> str | None:
        """The key that signed `commit` (an SSH key's SHA256 fingerprint, read from the
        signature itself; a GPG key as git reports it), or None when it is unsigned."""
        from vouch.git import ident

        found = self.store.read(commit)
        if found is None or found[0] != "commit":
            return None
        header = found[1].split(b"\n\n", 1)[0]
        key = ident.ssh_signing_key(header)
        if key is not None or b"\ngpgsig" not in header:
            return key
        out = self.git("log", "-1", "--no-walk", "--format=%GF%n%GK", commit, check=False)
        return next((ln.strip() for ln in out.splitlines() if ln.strip()), None)

    def reparent(self, commit: str, parents: list[str], tree: str | None = None) -> str:
        """`commit` written again on `parents` (and `tree`, when given): the same author,
        committer, dates and message, so the commit a person made stays theirs. A
        signature is dropped — it signed the old parents."""
        found = self.store.read(commit)
        if found is None or found[0] != "commit":
            raise GitFailure(f"{commit} is not a commit")
        header, _, message = found[1].partition(b"\n\n")
        out: list[bytes] = []
        signature = False
        for line in header.split(b"\n"):
            if signature and line.startswith(b" "):
                continue  # the signature's continuation lines
            signature = line.startswith(b"gpgsig")
            if signature or line.startswith(b"parent "):
                continue
            if line.startswith(b"tree "):
                out.append(b"tree " + (tree or line[5:].decode()).encode())
                out += [b"parent " + p.encode() for p in parents]
                continue
            out.append(line)
        return self.store.write("commit", b"\n".join(out) + b"\n\n" + message)

    def signs_commits(self) -> bool:
        """Whether `commit.gpgSign` asks for signed commits here (read for every commit:
        one `git config` process, and a setting changed meanwhile is obeyed)."""
        value = config_value(self.root, "commit.gpgsign")
        return (value or "").strip().lower() in ("true", "yes", "on", "1")

    def commit_parents(self, commit: str) -> list[str]:
        found = self.store.read(commit)
        if found is None or found[0] != "commit":
            raise GitFailure(f"{commit} is not a commit")
        head = found[1].split(b"\n\n", 1)[0].decode()
        return [line[7:] for line in head.splitlines() if line.startswith("parent ")]

    def is_ancestor(self, commit: str, of: str) -> bool:
        """Whether `commit` is in the history of `of` (itself included)."""
        if commit == of:
            return True
        return self.git("merge-base", commit, of, check=False).strip() == commit

    def update_refs(
        self,
        updates: Iterable[tuple[str, str | None, str | None]],
        message: str = "vouch",
        *,
        started: Callable[[int], None] | None = None,
    ) -> None:
        """Several ref changes in one git transaction: all happen or none do.

        Each update is (ref, new, old): new None deletes, old None means "must not exist".
        `started` hears the pid of the git process before it takes any lock.
        """
        lines = []
        for ref, new, old in updates:
            if new is None:
                lines.append(f"delete {ref} {old or ''}".rstrip())
            elif old is None:
                lines.append(f"create {ref} {new}")
            else:
                lines.append(f"update {ref} {new} {old}")
        run_bytes(
            ["update-ref", "-m", message, "--stdin"],
            self.root,
            input="\n".join(lines) + "\n",
            started=started,
        )

    def tree_changes(self, old: str | None, new: str, prefix: str = "") -> dict[str, str | None]:
        """Paths that differ between two trees: path -> new blob sha (None: deleted).

        In-process: only subtrees whose ids differ are opened.
        """
        before = {e[3]: e for e in self.ls_tree(old)} if old else {}
        after = {e[3]: e for e in self.ls_tree(new)}
        changes: dict[str, str | None] = {}
        for name in before.keys() | after.keys():
            a, b = before.get(name), after.get(name)
            if a is not None and b is not None and a[2] == b[2] and a[0] == b[0]:
                continue
            path = f"{prefix}{name}"
            if a is not None and a[1] == "tree":
                if b is not None and b[1] == "tree":
                    changes.update(self.tree_changes(a[2], b[2], path + "/"))
                    continue
                changes.update(self._removed(a[2], path + "/"))
            if b is not None and b[1] == "tree":
                changes.update(self.tree_changes(None, b[2], path + "/"))
            elif b is not None:
                changes[path] = b[2]
            elif a is not None and a[1] != "tree":
                changes[path] = None
        return changes

    def _removed(self, tree: str, prefix: str) -> dict[str, str | None]:
        return {path: None for path in self.tree_changes(None, tree, prefix)}

    def diff_text(self, old: str, new: str, paths: Iterable[str] = ()) -> str:
        return self.git("diff", "--no-color", "--no-renames", old, new, "--", *paths)

    def changed_names(self, old: str, new: str) -> list[str]:
        """Paths whose blobs differ between two trees or commits (`diff-tree -r`)."""
        out = self.git("diff-tree", "-r", "--no-renames", "--name-only", "-z", old, new)
        return [p for p in out.split("\0") if p]

    def tree_blobs(self, tree: str, paths: Iterable[str] = ()) -> dict[str, str]:
        """path -> blob id under `tree`, recursively (only `paths`, when given)."""
        out = self.git("ls-tree", "-r", "-z", tree, "--", *paths)
        rows = (entry.partition("\t") for entry in out.split("\0") if entry)
        return {path: info.split()[2] for info, _, path in rows}

    # -- history and the work tree, as the rest of vouch reads them ----------------------
    @property
    def common_dir(self) -> Path:
        """The repository's common git directory (shared by its worktrees)."""
        return self.store.common_dir

    def log_records(
        self,
        rev: str,
        fields: Iterable[str],
        *,
        grep: str | None = None,
        max_count: int | None = None,
        paths: Iterable[str] = (),
    ) -> list[list[str]]:
        """`git log rev`, one row of `fields` (pretty-format placeholders, which may hold
        newlines) per commit, newest first; `grep` keeps commits whose message contains
        that fixed string; `paths` keeps commits that changed them (git's default
        history simplification: a merge shows when it differs from every parent)."""
        args = ["log", "--format=" + "%x00".join(fields) + "%x01"]
        if max_count is not None:
            args.append(f"-n{max_count}")
        if grep is not None:
            args += ["-F", f"--grep={grep}"]
        out = self.git(*args, rev, "--", *paths)
        return [rec.lstrip("\n").split("\0") for rec in out.split("\x01") if rec.strip("\n")]

    def added_in(self, rev: str, path: str) -> str | None:
        """The newest commit in `rev`'s history that added `path`, or None."""
        out = self.git("log", "-n1", "--format=%H", "--diff-filter=A", rev, "--", path)
        return out.strip() or None

    def set_config(self, key: str, value: str) -> None:
        self.git("config", key, value)
