"""Session objects: a span of agent work, opened and closed by direct audited commits.

`sessions/<hh>/<id>.yaml` records who works on what (`task`, `note`, `actor`), whether
the session is `open`, and — once it ended — the proposals made in it. A proposal names
its session in the `Vouch-Session` trailer (and a claim in its `session_id` field); the
gate accepts that only for a session that exists and is still open (`require_open`).
Sessions are working state, not knowledge: they are not gated and not searched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile, InvalidId, NotFound, UsageError
from vouch.kinds import Obj
from vouch.kinds import session as session_kind
from vouch.store import writer
from vouch.store.kb import KB
from vouch.store.recovery import gate_lock

START_HINT = "start one with `vouch session start` (kb.session_start) and use its id"


def check_session_id(session_id: object) -> str:
    """A session id is a vouch object id; anything else is E103 before a lookup."""
    if not isinstance(session_id, str) or not ids.is_object_id(session_id):
        shown = (
            session_id
            if isinstance(session_id, str) and len(session_id) < 120
            else repr(session_id)[:120]
        )
        raise InvalidId(f"session id {shown!r} is not a vouch session id", hint=START_HINT)
    return session_id


def read_at(kb: KB, session_id: str, commit: str | None) -> Obj | None:
    """The session as committed in `commit`, or None when it holds no such session."""
    found = _file_at(kb, session_id, commit)
    return None if found is None else found[1]


def _file_at(kb: KB, session_id: str, commit: str | None) -> tuple[str, Obj] | None:
    """The session file's text in `commit` and the session it holds."""
    check_session_id(session_id)
    if commit is None:
        return None
    rel = session_kind.path_for(session_id)
    blob = kb.repo.blob_at(commit, kb.rel(rel))
    if blob is None:
        return None
    try:
        text = kb.repo.read_blob(blob).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFile(f"{rel} is not UTF-8 text: {exc}") from exc
    return text, session_kind.load(text, where=rel)


def require_open(kb: KB, session_id: str, commit: str | None) -> Obj:
    """The open session `session_id` in `commit`; NotFound (E101) when there is none,
    UsageError (E100) when it has ended. Nothing is written either way."""
    found = read_at(kb, session_id, commit)
    if found is None:
        raise NotFound(f"no session {session_id} on this branch", hint=START_HINT)
    if found.get("status") != "open":
        raise UsageError(
            f"session {session_id} ended at {found.get('ended_at') or '?'}; "
            "proposals can no longer join it",
            hint=START_HINT.replace("start one", "start a new one"),
        )
    return found


def start(kb: KB, actor: str, task: str | None = None, note: str | None = None) -> dict[str, Any]:
    """Open a session (one direct audited commit). Result: {session_id}."""
    values = {"task": task or None, "note": note or None, "actor": actor, "status": "open"}
    obj = session_kind.new(**values)  # E102 on bad text, before anything is written
    with gate_lock(kb):
        head = kb.repo.peek(kb.repo.head_branch())
        # the id derives from task, actor and the second it started: the same actor
        # opening the same task twice within a second waits for the next second
        while head and kb.repo.blob_at(head, kb.rel(session_kind.path_for(obj["id"]))):
            time.sleep(0.2)
            obj = session_kind.new(**values)
        writer.commit_direct(
            kb,
            {session_kind.path_for(obj["id"]): session_kind.dump(obj).encode()},
            subject=f"vouch: start session {obj['id']}",
            event="session.start",
            actor=actor,
            object_ids=[obj["id"]],
            data={"task": obj.get("task")},
        )
    return {"session_id": obj["id"]}


def end(
    kb: KB,
    actor: str,
    session_id: str,
    proposals: Callable[[], list[str]],
    transcript: str | None = None,
) -> dict[str, Any]:
    """Close an open session, recording the ids `proposals()` finds (called under the
    write lock, so no proposal can join in between) and, when given, the transcript
    source of its exchange, which its proposals cite by turn (`SOURCE:T12`).
    Result: {ok, session_id, proposals} (and transcript when attached)."""
    check_session_id(session_id)
    if transcript is not None:
        _check_transcript(kb, transcript)
    rel = session_kind.path_for(session_id)
    with gate_lock(kb):
        head = kb.repo.peek(kb.repo.head_branch())
        current = _file_at(kb, session_id, head)
        if current is None:
            raise NotFound(f"no session {session_id} on this branch", hint=START_HINT)
        text, found = current
        if found.get("status") != "open":
            raise UsageError(
                f"session {session_id} already ended at {found.get('ended_at') or '?'}",
                hint="`vouch show ID` shows it with its proposals",
            )
        made = sorted(proposals())
        changes: dict[str, Any] = {"status": "ended", "ended_at": ids.now_iso(), "proposals": made}
        if transcript is not None:
            changes["transcript"] = transcript
        edited = session_kind.KIND.edit(text, changes, where=rel)
        writer.commit_direct(
            kb,
            {rel: edited.encode()},
            subject=f"vouch: end session {session_id}",
            event="session.end",
            actor=actor,
            object_ids=[session_id],
            data={
                "proposals": len(made),
                "started_by": found.get("actor"),
                "transcript": transcript,
            },
        )
    ended: dict[str, Any] = {"ok": True, "session_id": session_id, "proposals": len(made)}
    return {**ended, "transcript": transcript} if transcript else ended


def _check_transcript(kb: KB, source_id: str) -> None:
    """A session's transcript is a registered source of type transcript (E101 / E100)."""
    from vouch.kinds import source as source_kind

    if not ids.is_source_id(source_id):
        raise InvalidId(
            f"transcript {source_id!r} is not a source id",
            hint="register it with `vouch source add FILE --type transcript`, then use its id",
        )
    try:
        meta = kb.read(source_kind.KIND, source_id)
    except CorruptFile:
        meta = None
    if meta is None:
        raise NotFound(
            f"no source {source_id}",
            hint="register it with `vouch source add FILE --type transcript`",
        )
    if meta.get("type") != "transcript":
        raise UsageError(
            f"source {source_id} is a {meta.get('type')!r} source, not a transcript",
            hint="register the session's log with `vouch source add FILE --type transcript`",
        )
