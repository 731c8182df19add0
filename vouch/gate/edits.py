"""The machinery of a lifecycle change: an approved object as the checked-out branch
commits it (`Approved`: its file's text, the parsed object and the field changes to
land), the branch it is read from (`Branch`), and `land_edit`, which edits every changed
file in place and commits them with one audit event. The verbs are in `lifecycle`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile, NotFound, ValidationFailed
from vouch.gate import seals
from vouch.kinds import Kind, Obj
from vouch.kinds import claim as claim_kind
from vouch.store import writer
from vouch.store.kb import KB

RETIRED = claim_kind.HIDDEN_STATUSES  # superseded, archived, redacted: hidden from search


@dataclass
class Approved:
    """One approved object as committed, and the field changes to land on it."""

    kind: Kind
    id: str
    path: str  # .vouch-relative
    text: str
    obj: Obj
    changes: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str) -> Any:
        return self.changes[name] if name in self.changes else self.obj.get(name)

    @property
    def status(self) -> str:
        return str(self.get("status") or "")

    def ids_in(self, name: str) -> list[str]:
        return list(self.get(name) or [])

    def add_to(self, name: str, value: str) -> None:
        if value not in self.ids_in(name):
            self.changes[name] = [*self.ids_in(name), value]

    @property
    def changed(self) -> bool:
        return any(self.obj.get(k) != v for k, v in self.changes.items())

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind.name, "id": self.id, "status": self.status or None}


class Branch:
    """Approved knowledge: what the checked-out branch's tip commits (not the work tree)."""

    def __init__(self, kb: KB, tip: str | None = None):
        """The checked-out branch at its tip, or at `tip` (a decision's running commit)."""
        self.kb = kb
        self.branch = kb.repo.head_branch()
        self.tip = tip or kb.repo.peek(self.branch)

    @property
    def name(self) -> str:
        return self.branch.removeprefix("refs/heads/")

    def blob(self, rel: str) -> bytes | None:
        return self.kb.committed(self.tip, rel)

    def load(self, kind: Kind, object_id: str) -> Approved | None:
        rel = kind.path_for(object_id)
        data = self.blob(rel)
        if data is None:
            return None
        where = f"{self.name}:{self.kb.rel(rel)}"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptFile(f"{where} is not UTF-8 text") from exc
        return Approved(kind, object_id, rel, text, kind.load(text, where=where))

    def find(
        self, object_id: str, role: str, kinds: tuple[Kind, ...] = (claim_kind.KIND,)
    ) -> Approved:
        """The approved object, or NotFound (InvalidId for what is not an id at all)."""
        ids.check_id(object_id, f"{role} id")
        if ids.is_object_id(object_id):
            for kind in kinds:
                found = self.load(kind, object_id)
                if found is not None:
                    return found
        what = " or ".join(k.name for k in kinds)
        raise NotFound(
            f"{role} {object_id} is not an approved {what} on {self.name}",
            hint=self._why_missing(object_id),
        )

    def _why_missing(self, object_id: str) -> str:
        from vouch.gate.propose import pending_for

        if ids.is_proposal_id(object_id):
            return "that is a proposal id: approve it, then change the object it adds"
        pending = pending_for(self.kb, object_id) if ids.is_object_id(object_id) else None
        if pending:
            return (
                f"it is still pending in proposal {pending}: approve it first, or "
                "propose again to change it"
            )
        return (
            "lifecycle changes apply to approved objects on the checked-out branch "
            "(`vouch list claims` shows them)"
        )

    def claim(self, object_id: str, role: str = "claim") -> Approved:
        return self.find(object_id, role)


def refuse(problems: list[str], what: str) -> None:
    if problems:
        raise ValidationFailed(problems, what=what)


def retired(obj: Approved) -> str | None:
    """Why `obj` no longer takes part (superseded, archived, redacted), else None."""
    if obj.status == "superseded" and obj.get("superseded_by"):
        return f"superseded by {obj.get('superseded_by')}"
    return obj.status if obj.status in RETIRED else None


def one_line(text: str | None) -> str | None:
    """A reason as a commit trailer: one line of printable text."""
    if not text:
        return None
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return line[:500] or None


def result(
    event: str, objects: Iterable[Approved], message: str, commit: str | None
) -> dict[str, Any]:
    return {
        "ok": True,
        "changed": commit is not None,
        "event": event,
        "commit": commit,
        "objects": [o.describe() for o in objects],
        "message": message,
    }


def land_edit(
    kb: KB,
    event: str,
    objects: list[Approved],
    message: str,
    actor: str,
    *,
    reason: str | None = None,
    data: dict[str, Any] | None = None,
    extra: dict[str, bytes] | None = None,
    extra_ids: Iterable[str] = (),
    touch: bool = True,
) -> dict[str, Any]:
    """Edit every changed object in place and commit them with one audit event, which
    names every object whose file the commit writes (`extra`: new files, `extra_ids`:
    theirs); nothing at all when nothing changes."""
    changed = [o for o in objects if o.changed]
    if not changed:
        return result(event, objects, message, None)
    now = ids.now_iso()
    files: dict[str, bytes] = dict(extra or {})
    for o in changed:
        changes = dict(o.changes)
        if touch and "updated_at" in o.kind.field_names:
            changes["updated_at"] = now
        files[o.path] = o.kind.edit(o.text, changes, where=kb.rel(o.path)).encode()
        o.changes = changes
    # the bytes this write leaves, so a check tells it from a hand edit (vouch.gate.seals)
    sealed = seals.edited(kb, [(o.path, o.text.encode(), files[o.path]) for o in changed])
    verb = event.split(".", 1)[1]
    subject = f"vouch: {verb} {objects[0].kind.name} {objects[0].id}"
    commit = writer.commit_direct(
        kb,
        files,
        subject=subject,
        event=event,
        actor=actor,
        object_ids=[*(o.id for o in objects), *extra_ids],
        data={
            **(data or {}),
            **({"reason": reason} if reason else {}),
            **({seals.FIELD: sealed} if sealed else {}),
        },
        extra_trailers={"Vouch-Object": objects[0].id, "Vouch-Reason": one_line(reason)},
    )
    return result(event, objects, message, commit)
