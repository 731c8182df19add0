"""The plan of `vouch forget ID --purge-history`: where the object's bytes are in this
clone's history, what reaches them, who else holds them, and what would stop the purge.

It reads and writes nothing. The files of an object are found by their paths (ids are in
every path vouch writes: `claims/<shard>/<id>.yaml`, `sources/<id>/...`) at every path
they ever had under `.vouch/`, in every commit of every ref and reflog. A `--token`
finds every other blob, commit message and tag message holding a literal string; a blob
that is not a forgotten object's file is named (with its object, when it is one) and
stops the purge, since vouch removes objects, not parts of other files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vouch.core import ids as idmod
from vouch.errors import InvalidId, NotFound
from vouch.forget import messages
from vouch.gate.records import REJECTED_PREFIX, REVIEWED_PREFIX
from vouch.git import purge
from vouch.kinds import KINDS
from vouch.store import audit
from vouch.store.kb import DECIDED_DIR, KB, PROPOSAL_PREFIX

JOURNAL = "forget.json"  # in the clone's state folder: a purge under way
PURGED = "purged.stamp"  # touched by each purge: a warm process older than it exits

LIMITS = (
    "other clones, forks and mirrors keep their own copy until they are replaced "
    "(re-clone them, or run the same purge there)",
    "a hosting service keeps pull-request refs (refs/pull/*, refs/merge-requests/*), "
    "cached views and backups that a push does not reach: ask its support to purge "
    "them and to run garbage collection",
    "anyone who fetched before the purge may push the old history back: tell them",
    "commits after the first one holding the bytes get new ids; their signatures, and "
    "those of anchor tags on them, are not carried over",
)


@dataclass
class Plan:
    ids: list[str]
    tokens: list[str]
    paths: list[str] = field(default_factory=list)
    blobs: set[str] = field(default_factory=set)
    touched: set[str] = field(default_factory=set)  # commits holding the bytes or words
    rewritten: set[str] = field(default_factory=set)  # every commit that gets a new id
    boundary: set[str] = field(default_factory=set)
    refs: dict[str, str] = field(default_factory=dict)  # every ref -> its object
    reaching: set[str] = field(default_factory=set)
    blockers: list[dict[str, str]] = field(default_factory=list)
    uncovered: list[dict[str, str]] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)  # bytes still in the object store
    remotes: list[dict[str, Any]] = field(default_factory=list)
    journal: dict[str, Any] | None = None

    @property
    def confirm(self) -> str:
        return ",".join(self.ids)

    def block(self, kind: str, message: str, hint: str) -> None:
        self.blockers.append({"kind": kind, "message": message, "hint": hint})

    def to_json(self, kb: KB) -> dict[str, Any]:
        groups = _group(self.reaching)
        return {
            "ids": self.ids,
            "paths": self.paths,
            "blobs": len(self.blobs),
            "commits_holding": len(self.touched),
            "commits_rewritten": len(self.rewritten),
            "refs": groups,
            "reflogs": "every reflog is expired (its entries are how old commits stay)",
            "still_stored": len(self.stored),
            "tokens": len(self.tokens),
            "uncovered": self.uncovered,
            "blockers": self.blockers,
            "remotes": self.remotes,
            "interrupted": self.journal,
            "confirm": self.confirm,
            "commands": commands(self),
            "limits": list(LIMITS),
        }


def _group(refs: set[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for ref in sorted(refs):
        out.setdefault(category(ref), []).append(ref)
    return out


def category(ref: str) -> str:
    if ref.startswith(PROPOSAL_PREFIX):
        return "pending proposals"
    for prefix, name in (
        ("refs/heads/", "branches"),
        ("refs/tags/vouch/audit/", "audit anchors"),
        ("refs/tags/", "tags"),
        ("refs/remotes/", "remote-tracking"),
        (REJECTED_PREFIX, "rejected proposals"),
        (REVIEWED_PREFIX, "review pins"),
        ("refs/notes/", "notes"),
        ("refs/stash", "stash"),
    ):
        if ref.startswith(prefix):
            return name
    return "other refs"


def commands(plan: Plan) -> list[str]:
    """What `--confirm` runs, in order (all through git's own tools)."""
    return [
        "vouch: append a history.purge audit event (who, when, which ids; no content)",
        "git fast-export --no-data --signed-tags=strip --reference-excluded-parents "
        "--all ^<commits before the bytes> | (drop the files, scrub the messages) | "
        "git fast-import --force  (new commits under refs/vouch-forget/, no ref moved)",
        "git mktag  (each annotated tag on a rewritten commit, unsigned)",
        "git update-ref --stdin  (every rewritten ref in one transaction)",
        "git read-tree -m -u OLD NEW  (the work tree follows)",
        "git reflog expire --expire=now --expire-unreachable=now --all",
        "git gc --prune=now",
        "vouch: stop the warm process, delete the search index and the search log, "
        "rebuild the index",
    ]


def remote_steps(name: str) -> list[str]:
    return [
        f"git push --force --all {name}",
        f"git push --force --tags {name}",
        f"git push {name} --delete <each branch or tag of the plan that is gone here>",
        "on the host: expire its reflogs and prune (`git reflog expire --expire=now "
        "--all && git gc --prune=now` in a bare repository; a hosting service: its "
        "support), and close or purge pull requests that held the bytes",
    ]


def make(kb: KB, ids: list[str], tokens: list[str] | None = None) -> Plan:
    repo = kb.repo
    wanted = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
    for one in wanted:
        if not (idmod.is_object_id(one) or idmod.is_source_id(one)):
            raise InvalidId(f"{one!r} is not an object or source id")
    plan = Plan(wanted, [t for t in (tokens or []) if t])
    plan.journal = _journal(kb)
    prefix = kb.rel(".") + "/"
    skip = (prefix + DECIDED_DIR + "/", prefix + audit.SEGMENT_DIR + "/", prefix + audit.LOG_NAME)
    found = sorted(
        p for p in purge.history_paths(repo, prefix) if not p.startswith(skip) and _names(p, wanted)
    )
    missing = [i for i in wanted if not any(_names(p, [i]) for p in found)]
    resuming = bool(plan.journal) and (plan.journal or {}).get("ids") == wanted
    if missing and not resuming:
        raise NotFound(
            f"no file of {missing[0]} in this repository's history",
            hint="`vouch show ID` or `vouch list` name objects; the id is the whole id",
        )
    plan.paths = found
    changes = purge.changes_of(repo, found)
    plan.blobs = {c.blob for c in changes if c.blob}
    plan.touched = {c.commit for c in changes if c.blob}
    _words(kb, plan)
    _tokens(kb, plan)
    plan.refs = purge.all_refs(repo)
    plan.rewritten, plan.boundary = purge.descendants(repo, plan.touched)
    plan.reaching = purge.refs_containing(repo, plan.touched)
    plan.stored = [b for b in sorted(plan.blobs) if purge.present(repo, b)]
    _blockers(kb, plan)
    _remotes(kb, plan)
    return plan


def _names(path: str, wanted: list[str]) -> bool:
    """Is `path` a file of one of the objects `wanted` (its id is a whole path segment,
    or a segment's stem)?"""
    for part in path.split("/"):
        stem = part.split(".", 1)[0]
        if part in wanted or stem in wanted:
            return True
    return False


def _words(kb: KB, plan: Plan) -> None:
    """Proposal commits of the forgotten objects: their subjects and rationales go."""
    for one in plan.ids:
        shas = purge.commits_naming(kb.repo, one)
        texts = _messages(kb, shas)
        plan.touched.update(s for s in shas if messages.holds_words(texts.get(s, ""), plan.ids))


def _messages(kb: KB, shas: list[str]) -> dict[str, str]:
    from vouch.git import trail

    return trail.messages(kb.repo, shas) if shas else {}


def _tokens(kb: KB, plan: Plan) -> None:
    repo = kb.repo
    paths = set(plan.paths)
    prefix = kb.rel(".") + "/"
    for token in plan.tokens:
        named = [i for i in plan.ids if token in i]
        if named:
            plan.block(
                "token-in-id",
                f"the id {named[0]} holds a --token (an id is a slug of the object's first "
                "words), and ids stay in the audit log, decision records and commit "
                "trailers, which the audit chain is hashed over",
                "vouch cannot remove an id from history; see docs/forget.md "
                "(what a purge cannot remove)",
            )
            continue
        for blob, path in purge.blobs_holding(repo, token.encode()):
            if blob in plan.blobs or path in paths:
                continue
            plan.uncovered.append(
                {"blob": blob, "path": path, "object": _object_of(path, prefix) or ""}
            )
        for sha in purge.messages_holding(repo, token):
            info = repo.store.info(sha)
            if info is not None and info[1] == "tag":
                target = purge.tagged_commit(repo, sha)
                plan.touched.add(target)  # made again, its message scrubbed
            else:
                plan.touched.add(sha)


def _object_of(path: str, prefix: str) -> str | None:
    """The object id a `.vouch/` path names, when it is an object's file."""
    if not path.startswith(prefix):
        return None
    parts = path[len(prefix) :].split("/")
    directories = {k.directory: k for k in KINDS.values()}
    if parts[0] not in directories or len(parts) < 2:
        return None
    if parts[0] == KINDS["source"].directory:
        return next((p for p in parts[1:] if idmod.is_source_id(p)), None)
    stem = parts[-1].split(".", 1)[0]
    return stem if idmod.is_object_id(stem) else None


def _blockers(kb: KB, plan: Plan) -> None:
    repo = kb.repo
    prefix = kb.rel(".") + "/"
    chained = (
        prefix + DECIDED_DIR + "/",
        prefix + audit.SEGMENT_DIR + "/",
        prefix + audit.LOG_NAME,
    )
    for u in plan.uncovered:
        what = f"the {u['object']} file " if u["object"] else ""
        if u["object"]:
            hint = f"forget {u['object']} too (add its id with --also)"
        elif u["path"].startswith(chained):
            hint = (
                "the audit log and decision records are hashed into the audit chain: "
                "vouch cannot rewrite them (see docs/forget.md)"
            )
        else:
            hint = (
                "vouch removes whole objects: remove that file from history with git "
                "yourself, or leave the token out"
            )
        plan.block(
            "token-elsewhere",
            f"a --token is also in {what}{u['path']} (blob {u['blob'][:12]}), which "
            "this purge does not remove",
            hint,
        )
    if repo.current_branch() is None:
        plan.block("detached", "HEAD is not on a branch", "check out a branch first")
    changed = purge.dirty(repo)
    if changed and not (plan.journal and set(changed) <= set(plan.paths)):
        plan.block(
            "dirty",
            f"the work tree has uncommitted changes ({', '.join(changed[:5])})",
            "commit or stash them first (and drop that stash after), then run it again",
        )
    pending = sorted(r for r in plan.reaching if r.startswith(PROPOSAL_PREFIX))
    if pending:
        names = ", ".join(r.removeprefix(PROPOSAL_PREFIX) for r in pending[:8])
        plan.block(
            "pending",
            f"pending proposal(s) {names} hold the bytes",
            "decide them first (`vouch approve ID` / `vouch reject ID --reason ...`): a "
            "rewritten proposal is no longer the commit its reviewer saw",
        )
    stash = purge.reflog_entries(repo, "refs/stash") if "refs/stash" in plan.refs else []
    held = [i for i, s in enumerate(stash) if purge.reaches(repo, [s], plan.touched)]
    if held:
        plan.block(
            "stash",
            f"stash entries {', '.join(f'stash@{{{i}}}' for i in held)} hold the bytes",
            "apply and commit them, or drop them (`git stash drop`), first",
        )
    for path, head in purge.worktrees(repo):
        if head and purge.reaches(repo, [head], plan.touched):
            plan.block(
                "worktree",
                f"the work tree at {path} has a commit that holds the bytes checked out",
                "check out a branch there and run it from there, or remove that work tree",
            )
    citing = _citing(kb, plan)
    if citing:
        plan.block(
            "cited",
            f"{', '.join(citing[:8])} in HEAD name {plan.ids[0] if len(plan.ids) == 1 else 'them'}",
            "forget them in the same purge (add their ids), or change them first "
            "(`vouch delete`, `vouch redact` or a revision) so nothing dangles",
        )


def _citing(kb: KB, plan: Plan) -> list[str]:
    """Knowledge files in HEAD (not forgotten) that name a forgotten id."""
    repo = kb.repo
    prefix = kb.rel(".") + "/"
    lines = purge.files_naming(repo, plan.ids, "HEAD", prefix) if repo.resolve("HEAD") else []
    skip = (prefix + DECIDED_DIR + "/", prefix + audit.SEGMENT_DIR + "/", prefix + audit.LOG_NAME)
    found = []
    for line in lines:
        path = line.split(":", 1)[1] if line.startswith("HEAD:") else line
        if path.startswith(skip) or path in plan.paths:
            continue
        found.append(_object_of(path, prefix) or path)
    return sorted(set(found))


def _remotes(kb: KB, plan: Plan) -> None:
    for name, url in purge.remotes(kb.repo):
        tracking = sorted(r for r in plan.reaching if r.startswith(f"refs/remotes/{name}/"))
        plan.remotes.append(
            {
                "name": name,
                "url": url,
                "holds": "yes" if tracking else "maybe",
                "why": f"{', '.join(tracking[:5])} reach the bytes"
                if tracking
                else "no tracking ref here reaches them, but a push or a fetch may have "
                "carried them",
                "run": remote_steps(name),
            }
        )


def _journal(kb: KB) -> dict[str, Any] | None:
    from vouch.core import safeload
    from vouch.errors import VouchError

    path = kb.state_dir / JOURNAL
    try:
        data = safeload.json_value(path.read_bytes(), where=str(path))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError, VouchError):
        return {"phase": "unreadable"}
    return data if isinstance(data, dict) else {"phase": "unreadable"}
