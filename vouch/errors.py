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
