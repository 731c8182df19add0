"""One error hierarchy. Every error carries a stable code and an exit status.

Exit 1 is a user error (bad arguments, not found, refused by the gate, unusable index);
exit 2 is a system error (unreadable knowledge file, git failure, model failure).
"""

from __future__ import annotations


class VouchError(Exception):
    code = "E000"
    exit_code = 1

    def __init__(self, message: str, *, code: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.hint = hint

    def to_json(self) -> dict[str, object]:
        body: dict[str, object] = {"code": self.code, "message": self.message}
        if self.hint:
            body["hint"] = self.hint
        return {"error": body}

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} ({self.hint})"


class NoKnowledgeBase(VouchError):
    code = "E001"


class IndexUnusable(VouchError):
    code = "E002"


class IndexCollision(VouchError):
    code = "E003"


class EmptyQuery(VouchError):
    code = "E004"


class UsageError(VouchError):
    code = "E100"


class NotFound(VouchError):
    code = "E101"


class ValidationFailed(VouchError):
    """Input that breaks the object model; `errors` lists every problem found."""

    code = "E102"

    def __init__(self, errors: list[str], *, what: str = "input"):
        self.errors = list(errors)
        super().__init__(f"invalid {what}: " + "; ".join(self.errors))

    def to_json(self) -> dict[str, object]:
        body = super().to_json()
        body["error"]["errors"] = self.errors  # type: ignore[index]
        return body


class InvalidId(VouchError):
    code = "E103"


class GateRefused(VouchError):
    """The review gate said no: self-approval, already decided, would clobber work."""

    code = "E104"


class Conflict(VouchError):
    code = "E105"


class LockTimeout(VouchError):
    code = "E106"


class EmbeddingDisabled(VouchError):
    """A vector request while `embedding.enabled: false` (lexical-only)."""

    code = "E107"


class StaleCursor(VouchError):
    code = "stale_cursor"


class SystemFailure(VouchError):
    code = "E200"
    exit_code = 2


class CorruptFile(SystemFailure):
    code = "E201"


class GitFailure(SystemFailure):
    code = "E202"


class ModelFailure(SystemFailure):
    code = "E203"


class OutsideRepository(VouchError):
    """A source path that leads out of the work tree, or into `.git/` or `.vouch/`."""

    code = "E108"


class InvalidPath(VouchError):
    """A path the operating system cannot use as given: a NUL byte, a name too long, ..."""

    code = "E109"


class SourceTooLarge(VouchError):
    """A source over `sources.max_bytes`, refused before it is read whole."""

    code = "E110"


class SettingsInvalid(CorruptFile):
    """The review settings a branch committed cannot be obeyed as written (a quoted
    'true', approvers given as one string): the gate refuses rather than guess. A user's
    error to fix in `.vouch/config.yaml` — caught wherever an unreadable file is."""

    code = "E111"
    exit_code = 1


class SchemaTooNew(VouchError):
    """The knowledge base is in a schema version newer than this vouch knows: every
    write is refused (reads go on) until vouch is upgraded."""

    code = "E112"


class Redacted(VouchError):
    """The bytes asked for were redacted by an approved decision: they are never
    registered or cited again (`vouch redact <source-id>`)."""

    code = "E113"


class PermissionDenied(SystemFailure):
    code = "E204"


class DiskFull(SystemFailure):
    """No space left on the device, or the disk quota is exhausted."""

    code = "E205"


def from_os_error(exc: BaseException, path: object = None) -> VouchError | None:
    """The VouchError an operating-system failure means, or None for other exceptions.

    Every transport's one error handler calls this, so "permission denied" or "disk full"
    is the same stable code at the CLI, over JSONL and over MCP. `path` names the file
    when the caller knows it better than the exception does.
    """
    import errno

    if isinstance(exc, ValueError) and "embedded null" in str(exc):  # before any syscall
        where = f" {path!r}" if path is not None else ""
        return InvalidPath(f"the path{where} contains a NUL byte", hint="pass the file's real name")
    if not isinstance(exc, OSError):
        return None
    name = path if path is not None else exc.filename
    what = f" {name}" if name is not None else ""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return PermissionDenied(
            f"permission denied{':' if what else ''}{what} ({exc.strerror})",
            hint="check the owner and permissions of that file and its directory (ls -l), "
            "then run the command again as a user who may use it",
        )
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(
            f"no space left{' for' if what else ''}{what} ({exc.strerror})",
            hint="free some disk space (or raise the quota), then run the command again",
        )
    if exc.errno in (errno.ENAMETOOLONG, errno.EILSEQ):
        return InvalidPath(
            f"unusable path{':' if what else ''}{what} ({exc.strerror})",
            hint="pass a shorter or differently spelled path",
        )
    return None
