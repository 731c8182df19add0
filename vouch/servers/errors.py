"""How a VouchError (or a bug) looks on the wire of the JSONL and MCP transports.

kb-methods.md gives the JSONL transport four codes. vouch's own error classes are finer,
so every error body carries both: `code` (the transport code a client branches on) and
`vouch_code` (the stable E-code that says exactly what went wrong). The mapping:

- `ops.MethodNotFound`                         -> method_not_found
- `ops.MissingParam`                           -> missing_param
- every other user error (exit status 1): bad params, validation, not found, refused by
  the review gate, lock timeout, unusable index, ... -> invalid_request. The spec has no
  finer code for "the request was well-formed but the knowledge base said no"; such a
  request is still one the client must change before retrying, which is what
  invalid_request tells it. `vouch_code` carries the specifics (E101 not found, E104
  refused by the gate, ...).
- `SystemFailure` (exit status 2) and any unexpected exception -> internal_error; an
  OSError is first given its own code by `errors.from_os_error` (E204 permission denied,
  E205 disk full; a NUL byte in a path is E109, a user error -> invalid_request).
"""

from __future__ import annotations

from typing import Any

from vouch.errors import SystemFailure, VouchError, from_os_error
from vouch.methods import registry as ops

METHOD_NOT_FOUND = "method_not_found"
MISSING_PARAM = "missing_param"
INVALID_REQUEST = "invalid_request"
INTERNAL_ERROR = "internal_error"
CODES = (METHOD_NOT_FOUND, MISSING_PARAM, INVALID_REQUEST, INTERNAL_ERROR)


def as_vouch_error(exc: BaseException) -> VouchError:
    """A VouchError as is; an operating-system failure (permission denied, disk full, a NUL
    byte in a path) as its own code; anything else is a bug, an internal SystemFailure."""
    if isinstance(exc, VouchError):
        return exc
    return from_os_error(exc) or SystemFailure(
        f"internal error: {type(exc).__name__}: {exc}",
        hint="the server log (stderr) has the traceback",
    )


def transport_code(err: VouchError) -> str:
    if isinstance(err, ops.MethodNotFound):
        return METHOD_NOT_FOUND
    if isinstance(err, ops.MissingParam):
        return MISSING_PARAM
    if err.exit_code == 1:
        return INVALID_REQUEST
    return INTERNAL_ERROR


def error_body(exc: BaseException) -> dict[str, Any]:
    """`{"code", "message", "vouch_code"}` plus `hint` / `errors` when the error has them."""
    err = as_vouch_error(exc)
    body: dict[str, Any] = {
        "code": transport_code(err),
        "message": err.message,
        "vouch_code": err.code,
    }
    if err.hint:
        body["hint"] = err.hint
    errors = getattr(err, "errors", None)
    if isinstance(errors, list):
        body["errors"] = [str(e) for e in errors]
    return body


def invalid_request(message: str, hint: str | None = None) -> dict[str, Any]:
    """The body for a malformed envelope, which never reaches the registry."""
    return error_body(ops.InvalidParams(message, hint=hint))
