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

from vouch.core import ids, safeload
from vouch.errors import UsageError, ValidationFailed
from vouch.gate import records
from vouch.gate.identity import Identity, principal
from vouch.gate.references import BaseView, Pending, check_references
from vouch.kinds import KINDS, Kind, Obj
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import source as source_kind
from vouch.store import evidence, sessions
from vouch.store.kb import KB, PROPOSAL_PREFIX
from vouch.store.recovery import gate_lock


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


def validate_values(
    kb: KB, view: BaseView, kind: Kind, values: dict[str, Any]
) -> tuple[Obj, dict[str, Obj], list[str], dict[str, str]]:
    """The object, the evidence it makes, every problem, and what it waits for (ids
    pending in open proposals: object id -> proposal id)."""
    made: dict[str, Obj] = {}
    errors: list[str] = []
    if isinstance(values.get("evidence"), list):
        values["evidence"], made, errors = _expand_pointers(view, values["evidence"])
    obj, schema_errors = build(kind, values)
    require = kb.config.get("review.require_citations", True) is not False
    ref_errors, waits = check_references(
        view, kind.name, obj, set(made), require, pending=_open_objects(kb), allow_pending=True
    )
    errors = [*errors, *schema_errors, *ref_errors, *_readable(kind, obj)]
    return obj, made, list(dict.fromkeys(errors)), waits


def _readable(kind: Kind, obj: Obj) -> list[str]:
    """An object vouch itself could not read back (over the safe reader's size limit)
    is refused here, not by approve as "not what vouch proposes"."""
    limit = safeload.MAX_PAGE_CHARS if kind.body_field else safeload.MAX_YAML_CHARS
    if sum(len(str(v)) for v in obj.values()) < limit // 2:
        return []  # far below the limit: no need to render it
    size = len(kind.dump(obj))
    if size <= limit:
        return []
    return [
        f"the {kind.name} would be a file of {size} characters, more than vouch reads "
        f"({limit >> 20} MiB): shorten it, or cite the long text as a source"
    ]


def _open_objects(kb: KB) -> Pending:
    def load() -> dict[str, str]:
        from vouch.gate.pending import open_objects

        return open_objects(kb)

    return load


def _waits_json(waits: dict[str, str]) -> list[dict[str, str]]:
    return [{"id": oid, "proposal_id": pid} for oid, pid in waits.items()]


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
    actor: str | Identity,
    kind_name: str,
    values: dict[str, Any],
    *,
    rationale: str | None = None,
    session_id: str | None = None,
    dry_run: bool = False,
    again: bool = False,
) -> dict[str, Any]:
    """Validate and open a proposal. Result: proposal_id, <kind>_id, valid, errors.

    Content already approved or already pending is reported (`duplicate`: "durable" or
    "pending", with the open proposal's id) instead of being proposed twice; content a
    reviewer rejected is reported (`duplicate: "rejected"`, with who rejected it and
    why) and proposed again only with `again`.
    """
    kind = KINDS[kind_name]
    key = f"{kind_name}_id"
    who = principal(kb, actor)
    actor = who.name
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
        obj, _, errors, waits = validate_values(kb, view, kind, dict(values))
        return {
            "proposal_id": None,
            key: obj["id"],
            "valid": not errors,
            "errors": errors,
            "waits_for": _waits_json(waits),
        }
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
        obj, made, errors, waits = validate_values(kb, view, kind, dict(values))
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
        rejected = None if again else rejected_before(kb, oid, base)
        if rejected:
            return {
                "proposal_id": None,
                key: oid,
                "valid": True,
                "errors": [],
                "duplicate": "rejected",
                "rejected": rejected,
            }
        pid = ids.proposal_id({"object": oid, "proposer": actor, "nonce": secrets.token_hex(8)})
        commit = _write_proposal(
            kb, kind, obj, made, pid, who, branch, base, rationale, session_id, waits
        )
        repo.update_ref(PROPOSAL_PREFIX + pid, commit, None, message=f"vouch: propose {pid}")
    return {
        "proposal_id": pid,
        key: oid,
        "valid": True,
        "errors": [],
        "waits_for": _waits_json(waits),
    }


def _write_proposal(
    kb: KB,
    kind: Kind,
    obj: Obj,
    made: dict[str, Obj],
    pid: str,
    who: Identity,
    branch: str,
    base: str,
    rationale: str | None,
    session_id: str | None,
    waits: dict[str, str] | None = None,
) -> str:
    """The proposal commit: authored by the proposer (a declared agent, or the person),
    committed (and signed, when the repository signs) by the person running vouch."""
    tree = proposal_tree(kb, kind, obj, made, base)
    message = proposal_message(
        kind, obj, pid, who.name, branch, base, rationale, session_id, waits or {}, label=who.label
    )
    return kb.repo.write_commit(tree, [base], message, author=(who.name, who.email))


def proposal_tree(kb: KB, kind: Kind, obj: Obj, made: dict[str, Obj], base: str) -> str:
    """The base commit's tree plus the object file and the evidence it makes."""
    repo = kb.repo
    view = BaseView(kb, base)
    files: dict[str, bytes] = {kind.path_for(obj["id"]): kind.dump(obj).encode()}
    for eid, ev in made.items():
        if not view.exists("evidence", eid):
            files[evidence_kind.path_for(eid)] = evidence_kind.dump(ev).encode()
    changes: dict[str, str | None] = {kb.rel(p): repo.write_blob(b) for p, b in files.items()}
    return repo.edit_tree(repo.store.peel_tree(base), changes)


def proposal_message(
    kind: Kind,
    obj: Obj,
    pid: str,
    actor: str,
    branch: str,
    base: str,
    rationale: str | None,
    session_id: str | None,
    waits: dict[str, str],
    *,
    revision: int | None = None,
    label: str | None = None,
) -> str:
    """A proposal (or revision) commit's message: subject, rationale, Vouch-* trailers."""
    title = " ".join(kind.title_of(obj).split())[:72] or obj["id"]
    return records.message(
        f"vouch: propose {kind.name}: {title}",
        rationale or "",
        {
            "Vouch-Proposal": pid,
            "Vouch-Kind": kind.name,
            "Vouch-Object": obj["id"],
            "Vouch-Proposer": actor,  # shown; the proposer is the commit's author
            "Vouch-As": label if label and label != actor else None,
            "Vouch-Base": branch,
            "Vouch-Base-Commit": base,
            "Vouch-Session": session_id,
            # informational (show, reject): approve recomputes what a proposal waits for
            "Vouch-Waits-For": ",".join(sorted(set(waits.values()))) or None,
            "Vouch-Revision": str(revision) if revision else None,
        },
    )


def require_valid(result: dict[str, Any], kind: str) -> dict[str, Any]:
    """For callers that want an exception (the CLI): invalid input is E102, exit 1."""
    if not result.get("valid"):
        raise ValidationFailed(list(result.get("errors") or []), what=kind)
    return result


def rejected_before(kb: KB, object_id: str, base: str) -> dict[str, Any] | None:
    """The latest rejection of a proposal of exactly this content, as recorded on `base`
    (who rejected it, when and why), or None."""
    found = []
    for proposal in records.read_proposals(kb, [records.REJECTED_PREFIX]):
        if proposal.object_id != object_id:
            continue
        decision = records.decision_of(kb, proposal.id, base) or {}
        if decision.get("withdrawn") is True:
            continue  # its proposer took it back: no reviewer said no
        found.append(
            {
                "proposal_id": proposal.id,
                "rejected_by": decision.get("decided_by"),
                "rejected_at": decision.get("decided_at"),
                "reason": decision.get("reason"),
            }
        )
    found.sort(key=lambda r: str(r["rejected_at"] or ""))
    return found[-1] if found else None
