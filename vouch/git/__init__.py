"""The git adapter: the only package that runs git or reads git's files.

Hot paths (commits through plumbing, ref listing, object reads) run in-process or through
one long-lived `git cat-file` — no import cost for a cold CLI, few processes per command;
everything else is plain `git` (no GitPython: docs/design.md says why). Object ids
follow the repository's format (sha1 or sha256). Every failure becomes a `GitFailure`
(exit 2) or a user error.
"""

from vouch.git.command import (
    EMPTY_TREE,
    EMPTY_TREES,
    GitCommandFailed,
    config_value,
    init_repo,
    inside_git_dir,
    run,
    run_bytes,
    toplevel,
)
from vouch.git.objects import ObjectStore, format_tree, object_sha, parse_tree
from vouch.git.repo import Repo

__all__ = [
    "EMPTY_TREE",
    "EMPTY_TREES",
    "GitCommandFailed",
    "ObjectStore",
    "Repo",
    "config_value",
    "format_tree",
    "init_repo",
    "inside_git_dir",
    "object_sha",
    "parse_tree",
    "run",
    "run_bytes",
    "toplevel",
]
