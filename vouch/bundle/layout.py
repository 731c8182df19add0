"""What a bundle may hold, by path: the knowledge layout of `.vouch/`, the audit log,
the manifest — and the names a bundle member may never have.

`name_problem` is git's verify_path for a member name (no absolute path, `..`, `.git`
in any case, backslash or control character) plus the layout: a member is the manifest,
an audit log file, or a file `vouch.health.files.catalog` names as a knowledge file at
the path its id dictates. `committed_files` lists what a commit holds of that layout.
"""

from __future__ import annotations

import re

from vouch.health.files import catalog
from vouch.kinds import KINDS
from vouch.store import audit
from vouch.store.kb import DECIDED_DIR, KB

MANIFEST = "manifest.json"
# what a bundle holds, as top-level names under .vouch/ (besides the audit log)
KNOWLEDGE_DIRS = (*(kind.directory for kind in KINDS.values()), DECIDED_DIR)
_REGULAR_MODES = ("100644", "100755")
_SEGMENT = re.compile(rf"{audit.SEGMENT_DIR}/\d{{6}}-[0-9a-f]{{16}}\.jsonl")


def is_audit_file(rel: str) -> bool:
    """The active audit log or a closed segment of it."""
    return rel == audit.LOG_NAME or _SEGMENT.fullmatch(rel) is not None


def in_layout(rel: str) -> bool:
    """Is `rel` (relative to .vouch/) a path a bundle may hold?"""
    if is_audit_file(rel):
        return True
    entry = catalog(rel)
    return entry is not None and entry.kind is not None and entry.problem is None


def ignored(rel: str) -> bool:
    """A file vouch ignores (lint warns: a stray file, a dot file): left out of a bundle.
    A misplaced or invalid knowledge file is not ignored: it stops an export."""
    if is_audit_file(rel):
        return False
    entry = catalog(rel)
    return entry is None or entry.kind is None


def name_problem(name: str) -> str | None:
    """Why a member name is unsafe to take, or None: what git's verify_path refuses, and
    anything outside the knowledge layout."""
    if not name:
        return "has an empty name"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return "has an absolute path"
    if "\\" in name or not name.isprintable():
        return "has a backslash or control character in its name"
    parts = name.split("/")
    if ".." in parts:
        return "climbs out with '..'"
    if any(p in ("", ".") for p in parts):
        return "has an empty or '.' path component"
    if any(p.casefold().rstrip(". ") in (".git", "git~1") for p in parts):
        return "names a .git directory"
    if name != MANIFEST and not in_layout(name):
        return "lies outside the knowledge layout"
    return None


def committed_files(kb: KB, commit: str) -> tuple[dict[str, str], list[str]]:
    """The files a bundle holds in `commit` (`.vouch/`-relative path -> blob id), read
    from its tree in-process, and the entries that cannot go in one (links, submodules)."""
    repo = kb.repo
    top = repo.blob_at(commit, kb.rel("."))
    found: dict[str, str] = {}
    problems: list[str] = []
    if top is None:
        return found, problems

    def walk(tree: str, prefix: str) -> None:
        for mode, typ, sha, name in repo.ls_tree(tree):
            rel = prefix + name
            if typ == "tree":
                walk(sha, rel + "/")
            elif mode in _REGULAR_MODES:
                found[rel] = sha
            else:
                what = {"120000": "a symbolic link", "160000": "a submodule"}.get(mode, mode)
                problems.append(f"{rel}: {what} in the committed tree, not a knowledge file")

    for mode, typ, sha, name in repo.ls_tree(top):
        if typ == "tree" and (name in KNOWLEDGE_DIRS or name == audit.SEGMENT_DIR):
            walk(sha, name + "/")
        elif name == audit.LOG_NAME and mode in _REGULAR_MODES:
            found[name] = sha
    return found, problems
