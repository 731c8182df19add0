"""What lint and doctor read from git: staged changes, listings, history, signatures.

Functions over a `Repo`, each one git process (or none), so a pre-commit hook on a large
knowledge base pays a handful of processes: `staged_changes` (what a commit would
record), `index_blobs` / `Repo.tree_blobs` (what exists), `grep_paths` (who mentions an
id), `added_in_history` (which commit added a file), `signatures` (`git verify-commit`
for many commits at once) and `hooks_dir` (where git looks for hooks).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vouch.git.command import run
from vouch.git.repo import Repo

_HEX = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True)
class Change:
    """One path that differs between two states: blobs are None where absent."""

    path: str
    old: str | None
    new: str | None
    old_mode: str
    new_mode: str

    @property
    def status(self) -> str:
        """A (added), D (deleted) or M (changed: content or mode)."""
        return "A" if self.old is None else "D" if self.new is None else "M"


def _null(repo: Repo, sha: str) -> str | None:
    return None if sha == repo.store.null_id else sha


def _raw_changes(repo: Repo, out: str) -> list[Change]:
    """Parse `--raw -z` output: `:old_mode new_mode old new status\\0path\\0` records."""
    parts = out.split("\0")
    changes: list[Change] = []
    i = 0
    while i + 1 < len(parts):
        head, path = parts[i], parts[i + 1]
        i += 2
        fields = head.lstrip(":").split()
        if len(fields) < 5:
            continue
        old_mode, new_mode, old, new = fields[:4]
        changes.append(Change(path, _null(repo, old), _null(repo, new), old_mode, new_mode))
    return changes


def staged_changes(repo: Repo, pathspecs: Iterable[str]) -> list[Change]:
    """What `git commit` would record under `pathspecs`: the index against HEAD (against
    the empty tree before the first commit)."""
    base = "HEAD" if repo.peek("HEAD") else repo.empty_tree
    out = repo.git(
        "diff-index",
        "--cached",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        base,
        "--",
        *pathspecs,
    )
    return _raw_changes(repo, out)


def tree_diff(repo: Repo, old: str, new: str, pathspecs: Iterable[str]) -> list[Change]:
    """Paths under `pathspecs` that differ between two commits or trees."""
    out = repo.git(
        "diff-tree", "-r", "--raw", "-z", "--no-renames", "--no-abbrev", old, new, "--", *pathspecs
    )
    return _raw_changes(repo, out)


def index_blobs(repo: Repo, pathspecs: Iterable[str]) -> dict[str, str]:
    """path -> blob in the user's index (stage 0; a conflicted path maps to its "ours")."""
    out = repo.git("ls-files", "-s", "-z", "--", *pathspecs)
    found: dict[str, str] = {}
    for entry in out.split("\0"):
        info, _, path = entry.partition("\t")
        fields = info.split()
        if len(fields) == 3 and fields[2] in ("0", "2"):
            found[path] = fields[1]
    return found


def grep_paths(
    repo: Repo,
    needles: Iterable[str],
    pathspecs: Iterable[str],
    *,
    rev: str | None = None,
    cached: bool = False,
) -> list[str]:
    """Paths under `pathspecs` whose content holds any of `needles` (fixed strings): in
    the work tree's tracked files, the index (`cached`) or the tree of `rev`."""
    args = ["grep", "-l", "-z", "-F", "-I"]
    if cached:
        args.append("--cached")
    for needle in needles:
        args += ["-e", needle]
    if len(args) == 5 + int(cached):
        return []
    if rev is not None:
        args.append(rev)
    out = run([*args, "--", *pathspecs], repo.root, check=False)
    prefix = f"{rev}:" if rev is not None else ""
    return [
        p[len(prefix) :] if prefix and p.startswith(prefix) else p for p in out.split("\0") if p
    ]


def merge_base(repo: Repo, a: str, b: str) -> str | None:
    out = repo.git("merge-base", a, b, check=False).strip()
    return out or None


def is_shallow(repo: Repo) -> bool:
    """A shallow clone: history stops at a grafted commit that seems to add everything."""
    return repo.git("rev-parse", "--is-shallow-repository").strip() == "true"


def added_in_history(
    repo: Repo, rev: str, pathspecs: Iterable[str], fields: Iterable[str]
) -> list[tuple[list[str], list[str]]]:
    """For each commit in `rev`'s history that added files under `pathspecs`: (its
    `fields` as pretty-format placeholders, the paths it added). Merges show no diff,
    so a file merged from a side branch is credited to the side commit that added it."""
    fmt = "%x01" + "%x00".join(fields) + "%x02"
    out = repo.git(
        "log",
        "--diff-filter=A",
        "--no-renames",
        "--name-only",
        "-z",
        f"--format={fmt}",
        rev,
        "--",
        *pathspecs,
    )
    found: list[tuple[list[str], list[str]]] = []
    for record in out.split("\x01")[1:]:
        head, _, names = record.partition("\x02")
        found.append(
            (head.split("\0"), [n.strip("\n") for n in names.split("\0") if n.strip("\n")])
        )
    return found


@dataclass(frozen=True)
class Signature:
    """What `git verify-commit` says of one commit (git's %G? letters)."""

    status: str  # G good, B bad, U good but untrusted, X/Y expired, R revoked, E/N none
    signer: str  # the verified signer (%GS): the SSH principal or the GPG user id
    key: str

    @property
    def good(self) -> bool:
        return self.status == "G"


def signatures(
    repo: Repo, commits: Iterable[str], allowed: Path | None = None
) -> dict[str, Signature]:
    """The signature check of each commit (git runs gpg or ssh-keygen as configured:
    gpg.format, gpg.ssh.allowedSignersFile, the keyring); `allowed`: the SSH allowed
    signers file to judge by instead of the clone's."""
    wanted = list(dict.fromkeys(commits))
    if not wanted:
        return {}
    out = repo.git(
        *trusting(allowed),
        "log",
        "--no-walk=unsorted",
        "--format=%H%x00%G?%x00%GS%x00%GK%x01",
        *wanted,
        "--",
    )
    found: dict[str, Signature] = {}
    for record in out.split("\x01"):
        parts = record.strip("\n").split("\0")
        if len(parts) == 4:
            found[parts[0]] = Signature(parts[1] or "N", parts[2], parts[3])
    return found


def trusting(allowed: Path | None) -> list[str]:
    """git's options for judging SSH signatures by `allowed` (none: the clone's)."""
    return ["-c", f"gpg.ssh.allowedSignersFile={allowed}"] if allowed is not None else []


def committers(repo: Repo, commits: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Each commit's committer (name, email), in one `git log`."""
    wanted = list(dict.fromkeys(commits))
    if not wanted:
        return {}
    out = repo.git("log", "--no-walk=unsorted", "--format=%H%x00%cn%x00%ce%x01", *wanted, "--")
    found: dict[str, tuple[str, str]] = {}
    for record in out.split("\x01"):
        parts = record.strip("\n").split("\0")
        if len(parts) == 3:
            found[parts[0]] = (parts[1], parts[2])
    return found


def hooks_dir(repo: Repo) -> Path:
    """Where git runs hooks from for this work tree (core.hooksPath or .git/hooks)."""
    path = Path(repo.git("rev-parse", "--git-path", "hooks").strip())
    return path if path.is_absolute() else repo.root / path


def path_blobs(repo: Repo, rev: str, paths: Iterable[str]) -> dict[str, set[str]]:
    """Every blob each of `paths` held in a commit of `rev`'s history (merges against
    each parent, no rename following), in one `git log`; paths taken literally."""
    wanted = sorted(set(paths))
    if not wanted:
        return {}
    out = repo.git(
        "log",
        "-m",
        "--full-history",
        "--no-renames",
        "--format=",
        "--raw",
        "-z",
        "--no-abbrev",
        rev,
        "--",
        *(f":(literal){p}" for p in wanted),
    )
    found: dict[str, set[str]] = {p: set() for p in wanted}
    for change in _raw_changes(repo, out):
        if change.new is not None and change.path in found:
            found[change.path].add(change.new)
    return found


def last_writers(
    repo: Repo, rev: str, pathspecs: Iterable[str], wanted: Iterable[str]
) -> dict[str, str]:
    """For each path of `wanted`: the newest commit in `rev`'s history that changed it
    (a merge counts only for what differs from every parent: its own resolution), found
    in one walk of the history under `pathspecs`. A path no commit changed is absent.

    Only commit ids and paths are read (no message, which a commit's author writes and
    could shape like another record): a token of the `-z` output that is a whole object
    id starts a commit; every path under `pathspecs` holds a `/`, so none is one."""
    todo = set(wanted)
    if not todo:
        return {}
    out = repo.git(
        "log",
        "--topo-order",
        "--no-renames",
        "--name-only",
        "-z",
        "--diff-merges=dense-combined",
        "--format=%H",
        rev,
        "--",
        *pathspecs,
    )
    width = len(repo.store.null_id)
    found: dict[str, str] = {}
    commit = None
    for token in out.split("\0"):
        if len(token) == width and _HEX.fullmatch(token):
            commit = token
            continue
        name = token[1:] if token.startswith("\n") else token
        if commit is not None and name in todo:
            found[name] = commit
            todo.discard(name)
            if not todo:
                break
    return found


def commit_messages(repo: Repo, commits: Iterable[str]) -> dict[str, str]:
    """commit -> its message, read from the commit objects (one cat-file pipe)."""
    wanted = list(dict.fromkeys(commits))
    out: dict[str, str] = {}
    for sha, got in zip(wanted, repo.store.read_many(wanted), strict=True):
        if got is not None and got[0] == "commit":
            _, _, message = got[1].partition(b"\n\n")
            out[sha] = message.decode("utf-8", "replace")
    return out


def unstaged_paths(repo: Repo, pathspecs: Iterable[str]) -> set[str]:
    """Tracked paths under `pathspecs` whose work-tree file differs from the index (or
    is gone): git's stat check, so only those files need reading."""
    out = repo.git("diff-files", "--name-only", "-z", "--no-renames", "--", *pathspecs)
    return {p for p in out.split("\0") if p}
