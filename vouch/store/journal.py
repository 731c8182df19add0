"""The landing journal: what an interrupted vouch write must finish, checked before use.

`landing.land` writes it before it touches the work tree, and removes it once the refs
moved; the next vouch write reads it (`load`) to finish or undo that landing. It lives
in this work tree's state folder inside the git directory (`state.local`), never in the
work tree: a journal a branch committed would otherwise be executed by the next write.

Even there it is input until proven otherwise. `load` checks every field before anything
acts on it, and a journal that fails any check is never executed: it is moved aside to
`rejected/` beside it (`rejected`, which `vouch doctor` reports) and the write goes on.

- bound to this clone and work tree: the clone's random id (`state.clone_id`) and the
  state folder's own path, so one copied from another clone or worktree is refused;
- refs: the branch is a `refs/heads/` branch, and the other updates are only the refs
  vouch writes for proposals (`refs/heads/vouch/proposal/<id>`, `refs/vouch/reviewed/<id>`,
  `refs/vouch/rejected/<id>`), each named once;
- object ids: full ids of this repository's hash that exist here, of the right type; the
  new commit's first parent is the old tip, and it holds exactly the recorded blobs;
- paths: relative, inside the knowledge folder, no `..`, `.`, empty or `.git` part, not
  under its local folders (`locks/`, `index/`);
- no control or format characters anywhere, in keys or values.
"""

from __future__ import annotations

import json
import os
import re
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vouch.core import fsio, ids
from vouch.store import state
from vouch.store.kb import KB, PROPOSAL_PREFIX

NAME = "landing.json"
REJECTED_DIR = "rejected"
VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # an import's journal names ~100k paths; more is not ours
# the refs vouch itself moves besides the branch: a proposal's, and its bookmarks
PROPOSAL_REF_PREFIXES = (PROPOSAL_PREFIX, "refs/vouch/reviewed/", "refs/vouch/rejected/")
_LOCAL_DIRS = ("locks", "index")  # inside the knowledge folder, but never knowledge
_BAD_IN_REF = frozenset(" ~^:?*[\\")
_HEX = re.compile(r"[0-9a-f]+\Z")
RefUpdate = tuple[str, str | None, str | None]


class InvalidJournal(Exception):
    """A journal that must not be executed; the message says why."""


@dataclass(frozen=True)
class Journal:
    branch: str
    old: str | None
    commit: str
    others: list[RefUpdate]
    changes: dict[str, str | None]
    before: dict[str, str | None]


def path(kb: KB) -> Path:
    return state.local_path(kb) / NAME


def write(
    kb: KB,
    branch: str,
    old: str | None,
    commit: str,
    others: list[RefUpdate],
    changes: dict[str, str | None],
    before: dict[str, str | None],
) -> None:
    folder = state.local(kb)
    body = {
        "version": VERSION,
        "clone": state.clone_id(kb),
        "state": os.path.realpath(folder),
        "branch": branch,
        "old": old,
        "commit": commit,
        "others": [list(u) for u in others],
        "changes": changes,
        "before": before,
    }
    fsio.write_atomic(folder / NAME, json.dumps(body))


def remove(kb: KB) -> None:
    path(kb).unlink(missing_ok=True)


def exists(kb: KB) -> bool:
    return os.path.lexists(path(kb))


def load(kb: KB) -> Journal | None:
    """The journal, checked; None when there is none, or when it failed a check (then
    it was moved aside to `rejected/`, where `rejected` finds it)."""
    where = path(kb)
    try:
        raw = _read(where)
    except FileNotFoundError:
        return None
    try:
        return check(kb, raw)
    except InvalidJournal as exc:
        set_aside(kb, where, str(exc))
        return None


def peek(kb: KB) -> Journal | None:
    """The journal when there is one and it passes every check; nothing is moved (a
    read-only check, e.g. the pre-commit hook's)."""
    try:
        return check(kb, _read(path(kb)))
    except (FileNotFoundError, InvalidJournal):
        return None


def _read(where: Path) -> bytes:
    fd = os.open(where, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not os.path.isfile(where) or os.fstat(fh.fileno()).st_size > MAX_BYTES:
            return b""  # a fifo, a device, a huge file: not a journal vouch wrote
        return fh.read(MAX_BYTES + 1)


def set_aside(kb: KB, where: Path, reason: str) -> Path:
    """Move a journal that must not run to `rejected/<time>-landing.json`, with the
    reason beside it (`.reason`), for `vouch doctor` to report."""
    folder = state.ensure(state.local(kb) / REJECTED_DIR)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = folder / f"{stamp}-{os.getpid()}-{NAME}"
    try:
        os.replace(where, target)
    except FileNotFoundError:
        return target
    except OSError:  # e.g. a folder planted under the name: never leave it to run
        os.rename(where, target)
    fsio.write_atomic(target.with_name(target.name + ".reason"), reason + "\n")
    return target


def rejected(kb: KB) -> list[tuple[Path, str]]:
    """Journals set aside as invalid, with the reason each was refused (oldest first)."""
    folder = state.local_path(kb) / REJECTED_DIR
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(NAME))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for name in names:
        try:
            reason = (folder / (name + ".reason")).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            reason = "unknown"
        found.append((folder / name, reason))
    return found


# -- the checks ------------------------------------------------------------------------------
def check(kb: KB, raw: bytes) -> Journal:
    """The journal in `raw`, or InvalidJournal naming the first field that fails."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidJournal(f"not a journal vouch wrote (unreadable: {exc})") from None
    if not isinstance(data, dict):
        raise InvalidJournal("not a journal vouch wrote (not an object)")
    _no_control(data, "journal")
    expected = {"version", "clone", "state", "branch", "old", "commit", "others"}
    expected |= {"changes", "before"}
    if set(data) != expected:
        raise InvalidJournal(f"unexpected fields {sorted(set(data) ^ expected)}")
    if data["version"] != VERSION:
        raise InvalidJournal(f"unknown version {data['version']!r}")
    if data["clone"] != state.clone_id(kb):
        raise InvalidJournal("it was written by another clone (its clone id is not this one's)")
    if data["state"] != os.path.realpath(state.local_path(kb)):
        raise InvalidJournal("it was written for another clone or worktree (its folder differs)")
    repo = kb.repo
    branch = _branch(data["branch"])
    commit = _object(kb, data["commit"], "commit", "commit")
    old = None if data["old"] is None else _object(kb, data["old"], "commit", "old")
    parents = repo.commit_parents(commit)
    if (parents[:1] if parents else [None]) != [old]:
        raise InvalidJournal(f"commit {commit} is not a commit on {old or 'a new branch'}")
    others = _others(kb, data["others"], branch)
    changes = _paths(kb, data["changes"], "changes")
    before = _paths(kb, data["before"], "before")
    if not set(before) <= set(changes):
        raise InvalidJournal("`before` names paths that `changes` does not")
    for rel, blob in changes.items():
        if repo.blob_at(commit, rel) != blob:
            raise InvalidJournal(f"commit {commit} does not hold the recorded {rel}")
        if old is not None and rel in before and repo.blob_at(old, rel) != before[rel]:
            raise InvalidJournal(f"commit {old} does not hold the recorded old {rel}")
    return Journal(branch, old, commit, others, changes, before)


def _no_control(value: Any, where: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _no_control(key, where)
            _no_control(item, f"{where}.{key}")
    elif isinstance(value, list):
        for item in value:
            _no_control(item, where)
    elif isinstance(value, str):
        bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")), None)
        if bad is not None:
            raise InvalidJournal(f"{where} holds the control character U+{ord(bad):04X}")


def _ref_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.isascii():
        raise InvalidJournal(f"{what} {value!r} is not a ref name vouch writes")
    parts = value.split("/")
    if (
        len(parts) < 3
        or parts[0] != "refs"
        or any(not p or p.startswith(".") or p.endswith((".", ".lock")) for p in parts)
        or ".." in value
        or "@{" in value
        or any(c in _BAD_IN_REF for c in value)
    ):
        raise InvalidJournal(f"{what} {value!r} is not a ref name vouch writes")
    return value


def _branch(value: object) -> str:
    ref = _ref_name(value, "branch")
    if not ref.startswith("refs/heads/"):
        raise InvalidJournal(f"branch {ref!r} is not a branch (refs/heads/...)")
    return ref


def _object(kb: KB, value: object, kind: str, what: str) -> str:
    width = 2 * kb.repo.store.width
    if not isinstance(value, str) or len(value) != width or not _HEX.match(value):
        raise InvalidJournal(f"{what} {value!r} is not a full object id of this repository")
    found = kb.repo.store.info(value)
    if found is None or found[1] != kind:
        raise InvalidJournal(f"{what} {value} is not a {kind} in this repository")
    return value


def _others(kb: KB, value: object, branch: str) -> list[RefUpdate]:
    if not isinstance(value, list):
        raise InvalidJournal("`others` is not a list")
    out: list[RefUpdate] = []
    seen = {branch}
    for item in value:
        if not isinstance(item, list) or len(item) != 3:
            raise InvalidJournal(f"ref update {item!r} is not [ref, new, old]")
        ref = _ref_name(item[0], "ref")
        prefix = next((p for p in PROPOSAL_REF_PREFIXES if ref.startswith(p)), None)
        if prefix is None or not ids.is_proposal_id(ref[len(prefix) :]):
            raise InvalidJournal(f"ref {ref!r} is not one vouch writes for a proposal")
        if ref in seen:
            raise InvalidJournal(f"ref {ref!r} is named twice")
        seen.add(ref)
        new = None if item[1] is None else _object(kb, item[1], "commit", ref)
        old = None if item[2] is None else _object(kb, item[2], "commit", ref)
        if new is None and old is None:
            raise InvalidJournal(f"ref update of {ref!r} names no commit")
        out.append((ref, new, old))
    return out


def _paths(kb: KB, value: object, what: str) -> dict[str, str | None]:
    if not isinstance(value, dict):
        raise InvalidJournal(f"`{what}` is not a mapping of paths")
    top = kb.rel(".").rstrip("/")  # the knowledge folder, as git names it
    top = "" if top == "." else top
    out: dict[str, str | None] = {}
    for rel, blob in value.items():
        out[_path(rel, top, what)] = None if blob is None else _object(kb, blob, "blob", rel)
    return out


def _path(rel: str, top: str, what: str) -> str:
    parts = rel.split("/")
    inner = parts[len(top.split("/")) :] if top else parts
    if (
        rel.startswith("/")
        or "\\" in rel
        or any(p in ("", ".", "..") or p.lower().rstrip(". ") == ".git" for p in parts)
        or (top and not rel.startswith(top + "/"))
        or len(inner) < 1
        or (len(inner) > 1 and inner[0] in _LOCAL_DIRS)
    ):
        raise InvalidJournal(f"{what} path {rel!r} is not inside the knowledge folder")
    return rel
