"""What approve checks before it writes anything: the proposal is what vouch makes.

A proposal branch is untrusted input (DESIGN §4.1): it may be built by hand with git
plumbing, pushed by anyone, or rewritten after review. Before a decision writes a byte,
the proposal commit must be exactly the shape `propose` produces:

- one commit whose only parent is the base commit its trailers name;
- a tree that differs from that base only by *added* regular files (mode 100644) at the
  paths the proposed ids dictate: the object file of the declared kind, plus evidence
  files its citations create — nothing outside `.vouch/`, no config, no audit file, no
  change to anything that exists, no symlink, gitlink, `..`, `.git` or odd tree entry;
- each file byte-identical to what vouch writes for the object it holds, with its id
  recomputed from its content, no field a proposer may not set (`approved_by`, lifecycle
  fields, a status other than the default), and references that hold on the target.

Only the checked files are ever copied onto the target branch; audit events are written
by the decision. A refusal names every offending path.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile, GateRefused
from vouch.gate import records
from vouch.gate.records import Proposal
from vouch.gate.references import BaseView, Pending, check_references
from vouch.kinds import GATED, KINDS, Kind, Obj
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import source as source_kind
from vouch.store import evidence
from vouch.store.kb import KB

REGULAR_FILE = "100644"
# fields only a decision or a lifecycle method sets, never a proposer
DECIDED_FIELDS = (
    "approved_by",
    "superseded_by",
    "supersedes",
    "contradicts",
    "last_confirmed_at",
    "redacted_hash",
)
_SHOWN = 10  # offending paths named in one refusal


@dataclass(frozen=True)
class Checked:
    """A proposal that passed: its object and the files (repository path -> blob)."""

    kind: Kind
    obj: Obj
    text: str
    files: dict[str, str]


Entry = tuple[str, str, str]  # (mode, type, sha)


def _entries(kb: KB, tree: str | None) -> tuple[dict[str, Entry], list[str]]:
    """A tree's entries by name, plus the names no git checkout would accept."""
    if tree is None:
        return {}, []
    found: dict[str, Entry] = {}
    bad = []
    for mode, kind, sha, name in kb.repo.ls_tree(tree):
        if not _sane(name) or name in found:
            bad.append(name)
        found[name] = (mode, kind, sha)
    return found, bad


def _sane(name: str) -> bool:
    """git's verify_path, for one tree entry name: no empty, `.`, `..`, `/`, NUL, nor
    `.git` in any case (with trailing dots or spaces, or the NTFS short name)."""
    if name in ("", ".", "..") or "/" in name or "\\" in name or "\0" in name:
        return False
    folded = name.lower().rstrip(". ")
    return folded not in (".git", "git~1")


def changed_entries(
    kb: KB, old: str | None, new: str, prefix: str = ""
) -> Iterator[tuple[str, Entry | None, Entry | None]]:
    """(path, entry before, entry after) for every path that differs between two trees.

    Subtrees are opened only where they differ. A name that is not a sane path
    component is reported as a change of its own (after = ("bad", ...)), never entered.
    """
    before, _ = _entries(kb, old)
    after, bad = _entries(kb, new)
    for name in sorted(set(bad)):
        yield prefix + name, before.get(name), ("bad", "bad", "")
    for name in sorted(before.keys() | after.keys()):
        if name in bad:
            continue
        a, b = before.get(name), after.get(name)
        if a == b:
            continue
        path = prefix + name
        a_tree = a is not None and a[1] == "tree"
        b_tree = b is not None and b[1] == "tree"
        if b_tree and (a is None or a_tree):
            assert b is not None
            yield from changed_entries(kb, a[2] if a else None, b[2], path + "/")
        elif a_tree and b is None:
            assert a is not None
            for sub, was, _ in changed_entries(kb, None, a[2], path + "/"):
                yield sub, was, None
        else:
            yield path, a, b


def _evidence_path(kb: KB) -> re.Pattern[str]:
    root = re.escape(kb.rel(evidence_kind.KIND.directory))
    return re.compile(rf"{root}/([0-9a-f]{{2}})/([a-z0-9][a-z0-9-]*-[0-9a-f]{{8}})\.yaml")


def _path_problems(
    kb: KB, proposal: Proposal, kind: Kind, base_tree: str | None, prop_tree: str
) -> tuple[dict[str, str], list[str]]:
    """Added files by repository path, and every path a proposal may not touch."""
    object_path = kb.rel(kind.path_for(proposal.object_id))
    ev_path = _evidence_path(kb)
    added: dict[str, str] = {}
    problems: list[str] = []
    for path, was, now in changed_entries(kb, base_tree, prop_tree):
        shown = path if _printable(path) else repr(path)
        if now is None:
            problems.append(f"deletes {shown}")
        elif now[0] == "bad":
            problems.append(f"holds an entry git refuses: {shown}")
        elif was is not None:
            problems.append(f"changes {shown}, which exists on its base")
        elif now[0] != REGULAR_FILE or now[1] != "blob":
            what = {
                "120000": "a symlink",
                "160000": "a gitlink (submodule)",
                "100755": "an executable file",
            }.get(now[0], f"mode {now[0]}")
            problems.append(f"adds {shown} as {what}")
        elif path == object_path or _is_evidence_path(ev_path, path):
            added[path] = now[2]
        else:
            problems.append(f"adds {shown}, outside what a {kind.name} proposal may add")
    if object_path not in added and not any(
        p.startswith("changes " + object_path) for p in problems
    ):
        problems.append(f"does not add {object_path}")
    return added, problems


def _is_evidence_path(pattern: re.Pattern[str], path: str) -> bool:
    m = pattern.fullmatch(path)
    return m is not None and ids.shard(m.group(2)) == m.group(1)


def _printable(text: str) -> bool:
    return text.isprintable() and ".." not in text.split("/")


def _content_problems(
    kb: KB,
    proposal: Proposal,
    kind: Kind,
    files: dict[str, str],
    view: BaseView,
    require_citations: bool,
    landing: Collection[str] = (),
    pending: Pending | None = None,
    *,
    references: bool = True,
) -> tuple[Obj | None, str, list[str]]:
    object_path = kb.rel(kind.path_for(proposal.object_id))
    problems: list[str] = []
    obj, text = _load(kb, kind, files[object_path], object_path, problems)
    if obj is None:
        return None, text, problems
    if obj.get("id") != proposal.object_id or kind.make_id(obj) != proposal.object_id:
        problems.append(
            f"{object_path}: its content does not hash to {proposal.object_id} "
            "(rewritten after it was proposed?)"
        )
    forged = [f for f in DECIDED_FIELDS if obj.get(f)]
    if forged:
        problems.append(
            f"{object_path}: sets {', '.join(forged)}, which only a decision "
            "or a lifecycle method may set"
        )
    status = next((f for f in kind.fields if f.name == "status"), None)
    if status is not None and obj.get("status") != status.default:
        problems.append(
            f"{object_path}: status {obj.get('status')!r}; a proposal starts as {status.default!r}"
        )
    if "proposed_by" in kind.field_names and obj.get("proposed_by") != proposal.proposer:
        problems.append(
            f"{object_path}: proposed_by {obj.get('proposed_by')!r} is not the "
            f"proposer {proposal.proposer!r}"
        )
    cited = {str(i) for i in obj.get("evidence") or []}
    made: set[str] = set()
    for path, blob in files.items():
        if path == object_path:
            continue
        ev, _ = _load(kb, evidence_kind.KIND, blob, path, problems)
        if ev is None:
            continue
        eid = str(ev.get("id"))
        if not path.endswith(f"/{eid}.yaml") or evidence_kind.KIND.make_id(ev) != eid:
            problems.append(f"{path}: its content does not hash to its name")
        elif eid not in cited:
            problems.append(f"{path}: evidence the proposed {kind.name} does not cite")
        else:
            sid = str(ev.get("source_id"))
            content = source_kind.read_content(view.read, sid) if ids.is_source_id(sid) else None
            again, errors = evidence.make(sid, str(ev.get("locator")), None, content)
            if again is None or _without_time(again) != _without_time(ev):
                problems.append(
                    f"{path}: does not match its source span"
                    + (f" ({'; '.join(errors)})" if errors else "")
                )
            made.add(eid)
    if not references:
        return obj, text, problems
    problems += [
        f"{object_path}: {e}"
        for e in check_references(
            view, kind.name, obj, made, require_citations, also=landing, pending=pending
        )[0]
    ]
    return obj, text, problems


def _without_time(obj: Obj) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "created_at"}


def _load(kb: KB, kind: Kind, blob: str, path: str, problems: list[str]) -> tuple[Obj | None, str]:
    """The object in a blob, when it is exactly what vouch writes for it."""
    try:
        text = kb.repo.read_blob(blob).decode("utf-8")
        obj = kind.load(text, where=path)
        canonical = kind.dump(obj)
    except (UnicodeDecodeError, CorruptFile, ValueError) as exc:
        problems.append(f"{path}: not a valid {kind.name} ({str(exc)[:200]})")
        return None, ""
    if canonical != text:
        problems.append(f"{path}: not written the way vouch writes a {kind.name} (edited by hand?)")
    return obj, text


def _revisions(kb: KB, proposal: Proposal) -> list[tuple[str, Proposal]]:
    """The proposal's commits from its base, oldest first, each read as a proposal: a
    straight line of vouch commits (one parent each) whose trailers agree on the
    proposal, its kind, proposer and base, numbered 1, 2, ... by `Vouch-Revision`."""
    repo = kb.repo
    refused = GateRefused(
        f"proposal {proposal.id} is not a line of vouch revisions on its recorded base "
        f"{proposal.base_commit[:12] or '(none)'}; vouch decides only what it proposed",
        hint="reject it, and propose the content again with vouch",
    )
    if not proposal.base_commit:
        raise refused
    chain: list[tuple[str, Proposal]] = []
    commit = proposal.commit
    while True:
        parents = repo.commit_parents(commit)
        found = records.read_commit(kb, commit, proposal.ref) if len(parents) == 1 else None
        same = (
            found is not None
            and (found.id, found.kind, found.proposer, found.proposer_email, found.base)
            == (
                proposal.id,
                proposal.kind,
                proposal.proposer,
                proposal.proposer_email,
                proposal.base,
            )
            and found.base_commit == proposal.base_commit
            # the trailer vouch writes names the commit's author; any other is forged
            and found.trailers.get("Vouch-Proposer") == [found.proposer]
        )
        if not same or found is None or len(chain) >= records.MAX_REVISIONS:
            raise refused
        chain.append((commit, found))
        if parents[0] == proposal.base_commit:
            break
        commit = parents[0]
    chain.reverse()
    if [records.revision_of(p) for _, p in chain] != list(range(1, len(chain) + 1)):
        raise refused
    return chain


def check(
    kb: KB,
    proposal: Proposal,
    target_tip: str,
    *,
    require_citations: bool,
    landing: Collection[str] = (),
    pending: Pending | None = None,
) -> Checked:
    """The proposal's object and files, or GateRefused naming every problem.

    References must hold on `target_tip` (in a joint approval: the commit that already
    holds the proposals landed before this one), or be in `landing`."""
    repo = kb.repo
    kind = KINDS.get(proposal.kind) if proposal.kind in GATED else None
    if kind is None or not ids.is_object_id(proposal.object_id):
        raise GateRefused(
            f"proposal {proposal.id} does not name a knowledge object",
            hint="its commit lacks valid Vouch-Kind / Vouch-Object trailers",
        )
    chain = _revisions(kb, proposal)
    base_tree = repo.store.peel_tree(proposal.base_commit)
    for number, (commit, revision) in enumerate(chain, 1):
        if commit == proposal.commit:
            break
        # an earlier revision: made by vouch as well (paths, bytes, ids), never landed
        tree = repo.store.peel_tree(commit)
        assert tree is not None
        files, problems = _path_problems(kb, revision, kind, base_tree, tree)
        if not problems:
            _, _, problems = _content_problems(
                kb,
                revision,
                kind,
                files,
                BaseView(kb, proposal.base_commit),
                False,
                references=False,
            )
        if problems:
            raise GateRefused(
                f"proposal {proposal.id} revision {number} ({commit[:12]}) is not what "
                "vouch proposes: " + "; ".join(problems[:_SHOWN]),
                hint=f"nothing was written; reject it (vouch reject {proposal.id} "
                "--reason ...) and propose the content again with vouch",
            )
    prop_tree = repo.store.peel_tree(proposal.commit)
    assert prop_tree is not None
    files, problems = _path_problems(kb, proposal, kind, base_tree, prop_tree)
    obj: Obj | None = None
    text = ""
    if not problems:
        view = BaseView(kb, target_tip)
        obj, text, problems = _content_problems(
            kb, proposal, kind, files, view, require_citations, landing, pending
        )
    if problems or obj is None:
        more = f" (and {len(problems) - _SHOWN} more)" if len(problems) > _SHOWN else ""
        raise GateRefused(
            f"proposal {proposal.id} is not what vouch proposes: "
            + "; ".join(problems[:_SHOWN])
            + more,
            hint=f"nothing was written; reject it (vouch reject {proposal.id} --reason ...) "
            "and propose the content again with vouch",
        )
    return Checked(kind, obj, text, files)


def check_change(kb: KB, proposal: Proposal, tip: str) -> None:
    """A change proposal (`vouch.gate.changes`) is one vouch commit on its recorded base
    whose tree IS the base's: it carries a request in its trailers, never a file. Its
    base is a commit of the branch it lands on (`tip`'s history): approving it merges no
    history the branch did not already hold."""
    chain = _revisions(kb, proposal)
    repo = kb.repo
    if not repo.is_ancestor(proposal.base_commit, tip):
        raise GateRefused(
            f"proposal {proposal.id} is a change proposal made on "
            f"{proposal.base_commit[:12]}, which is not a commit of the branch it would land "
            "on: approving it would bring that history in unreviewed",
            hint=f"nothing was written; reject it (vouch reject {proposal.id} --reason ...) "
            "and propose the change again on this branch",
        )
    if len(chain) != 1 or repo.store.peel_tree(proposal.commit) != repo.store.peel_tree(
        proposal.base_commit
    ):
        raise GateRefused(
            f"proposal {proposal.id} is a change proposal that carries files or revisions: "
            "vouch writes a change itself, from the request, and never takes a file from it",
            hint=f"nothing was written; reject it (vouch reject {proposal.id} --reason ...) "
            "and propose the change again with vouch",
        )
