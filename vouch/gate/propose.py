"""Propose: validate, then write one commit on a new `vouch/proposal/<id>` branch.

The commit is built from the base commit's tree with in-process git objects — the work
tree, the user's index and HEAD are never touched. It adds the object file and any
evidence it creates, nothing else: the audit events (`proposal.create` and the decision)
are written by the decision, never taken from a branch (see `verify`).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from vouch.core import ids
from vouch.errors import UsageError, ValidationFailed
from vouch.gate import records
from vouch.kinds import KINDS, Kind, Obj
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import source as source_kind
from vouch.store import evidence, sessions
from vouch.store.kb import KB, PROPOSAL_PREFIX
from vouch.store.landing import gate_lock

# kinds a relation endpoint may be, in the order they are looked for
_ENDPOINT_KINDS = ("claim", "entity", "page", "relation", "evidence", "session")


class BaseView:
    """What exists in the proposal's base commit (not the work tree: that may differ)."""

    def __init__(self, kb: KB, commit: str | None):
        self.kb = kb
        self.commit = commit

    def _has(self, rel: str) -> bool:
        if self.commit is None:
            return False
        return self.kb.repo.store.info(f"{self.commit}:{self.kb.rel(rel)}") is not None

    def exists(self, kind: str, object_id: str) -> bool:
        if kind == "source":
            return ids.is_source_id(object_id) and self._has(source_kind.path_for(object_id))
        return ids.is_object_id(object_id) and self._has(KINDS[kind].path_for(object_id))

    def any_kind(self, object_id: str) -> str | None:
        if ids.is_source_id(object_id):
            return "source" if self.exists("source", object_id) else None
        return next((k for k in _ENDPOINT_KINDS if self.exists(k, object_id)), None)

    def read(self, rel: str) -> bytes | None:
        if self.commit is None:
            return None
        found = self.kb.repo.store.read(f"{self.commit}:{self.kb.rel(rel)}")
        return found[1] if found and found[0] == "blob" else None


def build(kind: Kind, values: Mapping[str, Any]) -> tuple[Obj, list[str]]:
    """The object with defaults, timestamps and id, plus every schema problem (no raise)."""
    data = {k: v for k, v in values.items() if v is not None}
    now = ids.now_iso()
    for name in ("created_at", "updated_at"):
        if name in kind.field_names:
            data.setdefault(name, now)
    data["id"] = kind.make_id(data)
    obj = kind.normalize(data)
    return obj, kind.validate(obj)


def _cited(view: BaseView, item: str, made: set[str]) -> str | None:
    """The problem with one citation, or None when it names an existing source/evidence."""
    if ids.is_source_id(item):
        return None if view.exists("source", item) else f"source {item[:12]}… is not registered"
    if ids.is_object_id(item):
        if item in made or view.exists("evidence", item):
            return None
        return f"evidence {item} does not exist"
    return f"evidence item {item!r} is not a source id, evidence id or <source>:<locator>"


def _expand_pointers(
    view: BaseView, items: list[str]
) -> tuple[list[str], dict[str, Obj], list[str]]:
    """Replace `<sha>:<locator>` items by new evidence objects made in this proposal."""
    cited: list[str] = []
    made: dict[str, Obj] = {}
    errors: list[str] = []
    for item in items:
        pointer = evidence.parse_pointer(item) if isinstance(item, str) else None
        if pointer is None:
            cited.append(item)
            continue
        sid, locator = pointer
        content = source_kind.read_content(view.read, sid) if ids.is_source_id(sid) else None
        obj, errs = evidence.make(sid, locator, None, content)
        errors += errs
        if obj is not None:
            made[obj["id"]] = obj
            cited.append(obj["id"])
    return list(dict.fromkeys(cited)), made, errors


def reference_errors(
    view: BaseView, kind: str, obj: Obj, made: set[str], require_citations: bool
) -> list[str]:
    errors: list[str] = []
    if kind == "claim":
        if not obj.get("evidence") and require_citations:
            errors.append("evidence must cite at least one existing source or evidence id")
        errors += [e for e in (_cited(view, i, made) for i in obj.get("evidence") or []) if e]
        errors += [
            f"entity {e} does not exist"
            for e in obj.get("entities") or []
            if ids.is_object_id(e) and not view.exists("entity", e)
        ]
    elif kind == "relation":
        for end in ("source", "target"):
            value = obj.get(end)
            if (
                isinstance(value, str)
                and (ids.is_object_id(value) or ids.is_source_id(value))
                and view.any_kind(value) is None
            ):
                errors.append(f"relation {end} {value} does not exist")
        if obj.get("source") and obj.get("source") == obj.get("target"):
            errors.append("a relation cannot point from an object to itself")
        errors += [e for e in (_cited(view, i, made) for i in obj.get("evidence") or []) if e]
    elif kind == "page":
        for field, ref_kind in (("claims", "claim"), ("entities", "entity"), ("sources", "source")):
            errors += [
                f"{ref_kind} {i} does not exist"
                for i in obj.get(field) or []
                if (ids.is_object_id(i) or ids.is_source_id(i)) and not view.exists(ref_kind, i)
            ]
    return errors


def _validate(
    kb: KB, view: BaseView, kind: Kind, values: dict[str, Any]
) -> tuple[Obj, dict[str, Obj], list[str]]:
    made: dict[str, Obj] = {}
    errors: list[str] = []
    if isinstance(values.get("evidence"), list):
        values["evidence"], made, errors = _expand_pointers(view, values["evidence"])
    obj, schema_errors = build(kind, values)
    require = kb.config.get("review.require_citations", True) is not False
    errors = [*errors, *schema_errors, *reference_errors(view, kind.name, obj, set(made), require)]
    return obj, made, list(dict.fromkeys(errors))


def pending_for(kb: KB, object_id: str) -> str | None:
    """The open local proposal that already adds `object_id`, if any (one git call)."""
    rows = kb.repo.for_each_ref(
        PROPOSAL_PREFIX, ["refname:lstrip=4", "trailers:key=Vouch-Object,valueonly,separator=%x2C"]
    )
    for row in rows:
        if len(row) > 1 and object_id in row[1].split(","):
            return row[0]
    return None


def propose(
    kb: KB,
    actor: str,
    kind_name: str,
    values: dict[str, Any],
    *,
    rationale: str | None = None,
    session_id: str | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Validate and open a proposal. Result: proposal_id, <kind>_id, valid, errors.

    Content already approved or already pending is reported (`duplicate`: "durable" or
    "pending", with the open proposal's id) instead of being proposed twice.
    """
    kind = KINDS[kind_name]
    key = f"{kind_name}_id"
    if session_id is not None:
        # it goes into a trailer and a file: a well-formed id, then an open session
        sessions.check_session_id(session_id)
    values = {**values, "proposed_by": actor}
    if session_id is not None and "session_id" in kind.field_names:
        values["session_id"] = session_id
    repo = kb.repo
    if dry_run:
        view = BaseView(kb, repo.resolve("HEAD"))
        if session_id is not None:
            sessions.require_open(kb, session_id, view.commit)
        obj, _, errors = _validate(kb, view, kind, dict(values))
        return {"proposal_id": None, key: obj["id"], "valid": not errors, "errors": errors}
    with gate_lock(kb):
        branch = repo.current_branch()
        if branch is None:
            raise UsageError(
                "HEAD is detached", hint="check out a branch before proposing knowledge"
            )
        base = repo.peek(branch)
        if base is None:
            raise UsageError("the current branch has no commits yet", hint="run `vouch init`")
        if session_id is not None:
            sessions.require_open(kb, session_id, base)
        view = BaseView(kb, base)
        obj, made, errors = _validate(kb, view, kind, dict(values))
        oid = obj["id"]
        if errors:
            return {"proposal_id": None, key: oid, "valid": False, "errors": errors}
        if view.exists(kind_name, oid):
            return {
                "proposal_id": None,
                key: oid,
                "valid": True,
                "errors": [],
                "duplicate": "durable",
            }
        open_id = pending_for(kb, oid)
        if open_id:
            return {
                "proposal_id": open_id,
                key: oid,
                "valid": True,
                "errors": [],
                "duplicate": "pending",
            }
        pid = ids.proposal_id({"object": oid, "proposer": actor, "nonce": secrets.token_hex(8)})
        commit = _write_proposal(
            kb, kind, obj, made, pid, actor, branch, base, rationale, session_id
        )
        repo.update_ref(PROPOSAL_PREFIX + pid, commit, None, message=f"vouch: propose {pid}")
    return {"proposal_id": pid, key: oid, "valid": True, "errors": []}


def _write_proposal(
    kb: KB,
    kind: Kind,
    obj: Obj,
    made: dict[str, Obj],
    pid: str,
    actor: str,
    branch: str,
    base: str,
    rationale: str | None,
    session_id: str | None,
) -> str:
    repo = kb.repo
    view = BaseView(kb, base)
    files: dict[str, bytes] = {kind.path_for(obj["id"]): kind.dump(obj).encode()}
    for eid, ev in made.items():
        if not view.exists("evidence", eid):
            files[evidence_kind.path_for(eid)] = evidence_kind.dump(ev).encode()
    changes: dict[str, str | None] = {kb.rel(p): repo.write_blob(b) for p, b in files.items()}
    tree = repo.edit_tree(repo.store.peel_tree(base), changes)
    title = " ".join(kind.title_of(obj).split())[:72] or obj["id"]
    message = records.message(
        f"vouch: propose {kind.name}: {title}",
        rationale or "",
        {
            "Vouch-Proposal": pid,
            "Vouch-Kind": kind.name,
            "Vouch-Object": obj["id"],
            "Vouch-Proposer": actor,
            "Vouch-Base": branch,
            "Vouch-Base-Commit": base,
            "Vouch-Session": session_id,
        },
    )
    return repo.write_commit(tree, [base], message)


def require_valid(result: dict[str, Any], kind: str) -> dict[str, Any]:
    """For callers that want an exception (the CLI): invalid input is E102, exit 1."""
    if not result.get("valid"):
        raise ValidationFailed(list(result.get("errors") or []), what=kind)
    return result
