"""Git's side of `vouch forget --purge-history`: finding bytes in history, rewriting it
with git's own fast-export / fast-import, switching the refs in one transaction, and
expiring reflogs and pruning so the bytes leave this clone's object store.

The rewrite never moves a ref itself. fast-import writes the new commits under a
staging namespace (`STAGING`); the switch of every rewritten ref (and the removal of the
staging refs) is one `git update-ref --stdin` transaction, so a kill at any line leaves
either the old history or the new one, never a mix. Annotated tags are made again with
`git mktag` (unsigned: a signature cannot survive a change of its target) and switched
in the same transaction.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vouch.errors import GitFailure
from vouch.git.command import _BASE_ENV, GitCommandFailed, outcome, run, run_bytes
from vouch.git.repo import Repo

STAGING = "refs/vouch-forget/"  # fast-import's refs during a rewrite; never left behind


def all_refs(repo: Repo) -> dict[str, str]:
    """Every ref (name -> object id) but the staging ones."""
    out = run(["for-each-ref", "--format=%(refname) %(objectname)"], repo.root)
    refs = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    return {r: s for r, s in refs.items() if not r.startswith(STAGING)}


def staging_refs(repo: Repo) -> list[str]:
    out = run(["for-each-ref", "--format=%(refname)", STAGING], repo.root)
    return out.split()


def history_paths(repo: Repo, prefix: str) -> set[str]:
    """Every path under `prefix` that any commit of any ref or reflog ever held."""
    out = run_bytes(
        [
            "log",
            "--all",
            "--reflog",
            "-m",
            "--no-renames",
            "--format=",
            "--name-only",
            "-z",
            "--",
            prefix,
        ],
        repo.root,
    )
    return {p.decode("utf-8", "replace").strip("\n") for p in out.split(b"\0") if p.strip()}


@dataclass(frozen=True)
class Change:
    commit: str
    path: str
    blob: str | None  # None: the commit removed the path


def changes_of(repo: Repo, paths: Iterable[str]) -> list[Change]:
    """Each commit (of any ref or reflog) that set or removed one of `paths`."""
    wanted = sorted(set(paths))
    if not wanted:
        return []
    out = run_bytes(
        [
            "log",
            "--all",
            "--reflog",
            "-m",
            "--no-renames",
            "--raw",
            "--no-abbrev",
            "-z",
            "--format=%x01%H",
            "--",
            *wanted,
        ],
        repo.root,
    )
    found: list[Change] = []
    for chunk in out.split(b"\x01")[1:]:
        parts = chunk.split(b"\0")
        commit = parts[0].strip().decode()
        rest = [p for p in parts[1:]]
        i = 0
        while i + 1 < len(rest):
            meta, path = rest[i].strip(b"\n"), rest[i + 1].decode("utf-8", "replace")
            i += 2
            if not meta.startswith(b":"):
                continue
            fields = meta.decode().split()
            new = fields[3]
            blob = None if set(new) == {"0"} else new
            found.append(Change(commit, path, blob))
    return found


def refs_containing(repo: Repo, commits: Iterable[str]) -> set[str]:
    """The refs that reach any of `commits` (one `for-each-ref --contains` each)."""
    out: set[str] = set()
    for c in sorted(set(commits)):
        text = run(["for-each-ref", "--format=%(refname)", "--contains", c], repo.root, check=False)
        out.update(r for r in text.split() if not r.startswith(STAGING))
    return out


def reflog_entries(repo: Repo, ref: str) -> list[str]:
    """The commits `ref`'s reflog names, newest first (stash@{0}, stash@{1}, ...)."""
    out = run(["log", "-g", "--format=%H", ref, "--"], repo.root, check=False)
    return out.split()


def reaches(repo: Repo, tips: Iterable[str], commits: Iterable[str]) -> bool:
    """Does any of `tips` reach any of `commits`?"""
    want = set(commits)
    for tip in tips:
        for c in want:
            if repo.is_ancestor(c, tip):
                return True
    return False


def blobs_holding(repo: Repo, needle: bytes) -> list[tuple[str, str]]:
    """(blob, a path it had) for every blob reachable from a ref or a reflog whose bytes
    hold `needle`."""
    listing = run(["rev-list", "--all", "--reflog", "--objects"], repo.root)
    paths: dict[str, str] = {}
    for line in listing.splitlines():
        sha, _, path = line.partition(" ")
        if path:
            paths.setdefault(sha, path)
    return [(sha, paths[sha]) for sha in _holding(repo, list(paths), needle, kind="blob")]


def objects_holding(repo: Repo, needle: bytes) -> list[str]:
    """Every object in this clone's store, reachable or not, whose bytes (as git gives
    them: blobs, commit and tag messages, tree entries) hold `needle`."""
    listing = run(
        ["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], repo.root
    ).split()
    return _holding(repo, listing, needle)


def _holding(repo: Repo, shas: list[str], needle: bytes, kind: str | None = None) -> list[str]:
    if not shas:
        return []
    hits = []
    for sha, found in zip(shas, repo.store.read_many(shas), strict=True):
        if found is not None and (kind is None or found[0] == kind) and needle in found[1]:
            hits.append(sha)
    return hits


def messages_holding(repo: Repo, needle: str) -> list[str]:
    """Commits (of any ref or reflog) and annotated tags whose message holds `needle`."""
    commits = run(
        ["log", "--all", "--reflog", "-F", "--format=%H", f"--grep={needle}"], repo.root
    ).split()
    tags = run(
        ["for-each-ref", "--format=%(objecttype) %(objectname) %(refname)", "refs/tags/"],
        repo.root,
    )
    named = [line.split()[1] for line in tags.splitlines() if line.startswith("tag ")]
    return commits + [t for t in _holding(repo, named, needle.encode()) if t not in commits]


def present(repo: Repo, sha: str) -> bool:
    """Is object `sha` in this clone's store (loose or packed)? Asked of a new git
    process: a long-running reader may still hold a pack that gc has deleted."""
    return outcome(["cat-file", "-e", sha], repo.root)[0] == 0


def dirty(repo: Repo) -> list[str]:
    """Tracked changes and untracked files of the work tree (ignored files are not)."""
    out = run(["status", "--porcelain", "-z", "--untracked-files=all"], repo.root)
    return [e[3:] for e in out.split("\0") if len(e) > 3]


def worktrees(repo: Repo) -> list[tuple[str, str]]:
    """(path, HEAD commit) of every work tree of this repository but this one."""
    out = run(["worktree", "list", "--porcelain"], repo.root)
    found, path, head = [], "", ""
    for line in [*out.splitlines(), ""]:
        if line.startswith("worktree "):
            path = line[len("worktree ") :]
        elif line.startswith("HEAD "):
            head = line[len("HEAD ") :]
        elif not line and path:
            if os.path.realpath(path) != os.path.realpath(repo.root):
                found.append((path, head))
            path, head = "", ""
    return found


def remotes(repo: Repo) -> list[tuple[str, str]]:
    """(name, fetch URL) of each configured remote."""
    out = run(["remote", "-v"], repo.root)
    seen: dict[str, str] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            seen.setdefault(parts[0], parts[1])
    return sorted(seen.items())


def commit_graph(repo: Repo) -> list[tuple[str, list[str]]]:
    """(commit, parents) of every commit the refs reach, parents first."""
    out = run(["rev-list", "--all", "--parents", "--topo-order", "--reverse"], repo.root)
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if parts:
            rows.append((parts[0], parts[1:]))
    return rows


def descendants(repo: Repo, roots: Iterable[str]) -> tuple[set[str], set[str]]:
    """(the commits `roots` reach forward to, themselves included; the parents of those
    commits outside that set): what a rewrite from `roots` changes, and its boundary."""
    marked = set(roots)
    graph = commit_graph(repo)
    for commit, parents in graph:
        if any(p in marked for p in parents):
            marked.add(commit)
    boundary = {p for c, ps in graph if c in marked for p in ps if p not in marked}
    return {c for c, _ in graph if c in marked}, boundary


# -- the rewrite ---------------------------------------------------------------------------
@dataclass
class Rewritten:
    commits: dict[str, str] = field(default_factory=dict)  # old commit -> new
    tags: dict[str, str] = field(default_factory=dict)  # tag ref -> new tag object


@dataclass
class _Tag:
    name: str
    target: str  # ":N" or a commit id
    header: list[bytes]
    message: bytes


def rewrite(
    repo: Repo,
    boundary: Iterable[str],
    drop_path: Callable[[str], bool],
    scrub: Callable[[bytes], bytes],
    workdir: Path,
) -> Rewritten:
    """Export every ref's history past `boundary`, drop the files `drop_path` names from
    every commit, pass every commit and tag message through `scrub`, and import the
    result as new objects under `STAGING` (no real ref moves). Returns old -> new."""
    old_marks, new_marks = workdir / "old.marks", workdir / "new.marks"
    for f in (old_marks, new_marks):
        f.unlink(missing_ok=True)
    export_args = [
        "git",
        "fast-export",
        "--no-data",
        "--signed-tags=strip",
        "--tag-of-filtered-object=rewrite",
        "--reencode=no",
        "--reference-excluded-parents",
        f"--export-marks={old_marks}",
        "--all",
        *(f"^{b}" for b in sorted(set(boundary))),
    ]
    import_args = ["git", "fast-import", "--quiet", "--force", f"--export-marks={new_marks}"]
    env = {**os.environ, **_BASE_ENV}
    tags: list[_Tag] = []
    with tempfile.TemporaryFile(dir=workdir) as stream:
        exporter = subprocess.Popen(
            export_args, cwd=repo.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        assert exporter.stdout is not None
        _filter(exporter.stdout, stream, drop_path, scrub, tags)
        err = exporter.stderr.read() if exporter.stderr else b""
        if exporter.wait() != 0:
            raise GitCommandFailed(export_args[1:], exporter.returncode, err.decode())
        stream.seek(0)
        proc = subprocess.run(
            import_args, cwd=repo.root, stdin=stream, capture_output=True, env=env
        )
        if proc.returncode != 0:
            raise GitCommandFailed(import_args[1:], proc.returncode, proc.stderr.decode())
    old = _marks(old_marks)
    new = _marks(new_marks)
    out = Rewritten({sha: new[m] for m, sha in old.items() if m in new})
    for tag in tags:
        target = new.get(tag.target) if tag.target.startswith(":") else out.commits.get(tag.target)
        if target is None:
            continue  # a tag of a commit the rewrite left alone: unchanged
        text = (
            f"object {target}\ntype commit\ntag {tag.name}\n".encode()
            + b"".join(h + b"\n" for h in tag.header)
            + b"\n"
            + scrub(tag.message)
        )
        made = run(["mktag"], repo.root, input=text).strip()
        out.tags["refs/tags/" + tag.name] = made
    return out


def _marks(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return {}
    return dict(line.split(" ", 1) for line in text.splitlines() if " " in line)


def _filter(
    src: object,
    dst: object,
    drop_path: Callable[[str], bool],
    scrub: Callable[[bytes], bytes],
    tags: list[_Tag],
) -> None:
    """The fast-export stream, rewritten for fast-import (see `rewrite`)."""
    read = src.readline  # type: ignore[attr-defined]
    write = dst.write  # type: ignore[attr-defined]
    mode = b""  # the command being read: commit, tag, reset, ...
    tag: _Tag | None = None
    while True:
        line = read()
        if not line:
            break
        if line.startswith(b"data "):
            size = int(line[5:].strip())
            body = src.read(size)  # type: ignore[attr-defined]
            if mode == b"tag" and tag is not None:
                tag.message = body
                tags.append(tag)
                tag = None
                continue
            if mode == b"commit":
                body = scrub(body)
            write(b"data %d\n" % len(body) + body)
            continue
        if line.startswith(b"commit ") or line.startswith(b"reset "):
            mode, _, ref = line.rstrip(b"\n").partition(b" ")
            write(mode + b" " + STAGING.encode() + ref + b"\n")
            continue
        if line.startswith(b"tag "):
            mode = b"tag"
            tag = _Tag(line[4:].rstrip(b"\n").decode("utf-8", "replace"), "", [], b"")
            continue
        if line.startswith((b"blob", b"feature", b"progress", b"checkpoint", b"done")):
            mode = line.split()[0]
        elif mode == b"tag":  # made again with mktag after the import: nothing goes through
            if tag is not None and line.startswith(b"from "):
                tag.target = line[5:].strip().decode()
            elif tag is not None and line.startswith(b"tagger "):
                tag.header.append(line.rstrip(b"\n"))
            continue  # mark, original-oid, the blank line after its message
        elif mode == b"commit" and line[:2] in (b"M ", b"D "):
            path = line.rstrip(b"\n").split(b" ", 3)[-1] if line[:1] == b"M" else line[2:-1]
            if drop_path(path.decode("utf-8", "replace")):
                continue
        write(line)


def switch(repo: Repo, moves: dict[str, tuple[str, str]]) -> None:
    """Move each ref from its old value to its new one, and delete every staging ref, in
    one transaction: all of it happens or none of it does."""
    lines = ["start"]
    lines += [f"update {ref} {new} {old}" for ref, (old, new) in sorted(moves.items())]
    lines += [f"delete {ref}" for ref in staging_refs(repo)]
    lines += ["prepare", "commit"]
    run(["update-ref", "--stdin"], repo.root, input="\n".join(lines) + "\n")


def drop_staging(repo: Repo) -> None:
    """Remove the staging refs a rewrite cut short left."""
    names = staging_refs(repo)
    if names:
        text = "".join(f"delete {ref}\n" for ref in names)
        run(["update-ref", "--stdin"], repo.root, input=text)


def move_work_tree(repo: Repo, old: str, new: str) -> None:
    """Bring the index and work tree from commit `old` to `new` (a two-tree merge: a
    local change to a file that differs is refused, never overwritten)."""
    run(["read-tree", "-m", "-u", old, new], repo.root)


def forget_unreachable(repo: Repo) -> None:
    """Expire every reflog now and prune every unreachable object: what no ref reaches
    leaves this clone's object store."""
    run(
        ["reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all"],
        repo.root,
    )
    try:
        run(["gc", "--quiet", "--prune=now"], repo.root)
    except GitCommandFailed as exc:
        raise GitFailure(f"git gc failed after the rewrite: {exc.stderr.strip()[:300]}") from exc


def ever_held(repo: Repo, rev: str, paths: Iterable[str]) -> set[str]:
    """Which of `paths` some commit of `rev`'s history added, changed or removed."""
    wanted = sorted(set(paths))
    if not wanted or repo.resolve(rev) is None:
        return set()
    out = run_bytes(
        ["log", "-m", "--no-renames", "--format=", "--name-only", "-z", rev, "--", *wanted],
        repo.root,
    )
    return {p.decode("utf-8", "replace").strip("\n") for p in out.split(b"\0") if p.strip()}


def commits_naming(repo: Repo, object_id: str) -> list[str]:
    """Every commit of any ref or reflog whose message names `object_id` as its
    `Vouch-Object` (the proposals and decisions of a forgotten object)."""
    out = repo.git(
        "log", "--all", "--reflog", "-F", "--format=%H", f"--grep=Vouch-Object: {object_id}"
    )
    return out.split()


def tagged_commit(repo: Repo, tag: str) -> str:
    """The commit an annotated tag object points at."""
    return repo.git("rev-parse", f"{tag}^{{commit}}").strip()


def files_naming(repo: Repo, needles: Iterable[str], rev: str, prefix: str) -> list[str]:
    """Paths under `prefix` in `rev`'s tree holding any of `needles` (fixed strings)."""
    args = ["grep", "-l", "-F", *(x for n in needles for x in ("-e", n)), rev, "--", prefix]
    return repo.git(*args, check=False).splitlines()


def reset_work_tree(repo: Repo) -> None:
    """The index and work tree made HEAD's again (`read-tree -u --reset HEAD`)."""
    repo.git("read-tree", "-u", "--reset", "HEAD")
