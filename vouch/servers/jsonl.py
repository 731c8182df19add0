"""The JSONL transport: one JSON request per line in, one JSON response per line out.

Request:  {"id": str|int|null, "method": "kb.search", "params": {...}}
Response: {"id": ..., "ok": true, "result": ...}
       or {"id": ..., "ok": false, "error": {"code", "message", "vouch_code", "hint"?}}

Rules this adapter keeps (decided here where kb-methods.md is silent):
- Every non-blank line gets exactly one response, in order; blank lines are skipped.
  There are no notifications: a request without an `id` is answered with `"id": null`.
- Anything wrong with a line — invalid UTF-8, not JSON, NaN/Infinity, not an object, a
  bad `id`/`method`/`params`, longer than `max_line` bytes — is answered with
  `invalid_request` (and `"id": null` when the id itself is unusable); serving goes on.
  Unknown top-level keys (e.g. "jsonrpc") are ignored.
- Only EOF on stdin ends the server (exit 0).
- stdout carries responses and nothing else: while serving, fd 1 points at stderr and
  fd 0 at /dev/null, so a stray print or a child process (git) can neither corrupt the
  response stream nor swallow requests. Logs go to stderr.
- Responses are ASCII-only JSON (non-ASCII escaped), so they are valid UTF-8 whatever
  the strings in them.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO, Any

from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.servers import log_ready
from vouch.servers.errors import error_body, invalid_request

log = logging.getLogger("vouch.serve.jsonl")

MAX_LINE_BYTES = 64 * 1024 * 1024  # large enough for a registered document, bounded memory
_DISCARD_CHUNK = 1024 * 1024


class BadEnvelope(Exception):
    """A line that is not a usable request; answered with invalid_request."""

    def __init__(self, message: str, request_id: Any = None):
        super().__init__(message)
        self.message = message
        self.request_id = request_id


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _valid_id(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


def _check_unicode(value: Any) -> None:
    """Reject lone surrogates (`"\\ud800"`): valid JSON, but not text any handler can store."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise BadEnvelope("strings must be valid Unicode (no lone surrogates)") from exc
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_unicode(key)
            _check_unicode(item)
    elif isinstance(value, list):
        for item in value:
            _check_unicode(item)


def parse_request(line: bytes) -> tuple[Any, str, dict[str, Any]]:
    """(id, method, params) from one line, or BadEnvelope."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadEnvelope(f"request is not valid UTF-8 (byte {exc.start})") from exc
    try:
        request = json.loads(text, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise BadEnvelope("request is nested too deeply") from exc
    except ValueError as exc:  # JSONDecodeError, NaN, integers too long to convert
        raise BadEnvelope(f"request is not valid JSON: {exc}") from exc
    if not isinstance(request, dict):
        raise BadEnvelope("request must be a JSON object with id, method and params")
    request_id = request.get("id")
    if not _valid_id(request_id):
        raise BadEnvelope("id must be a string, an integer or null")
    try:
        _check_unicode(request_id)
    except BadEnvelope:
        raise BadEnvelope("id must be valid Unicode") from None
    try:
        _check_unicode(request)
    except RecursionError as exc:
        raise BadEnvelope("request is nested too deeply", request_id) from exc
    except BadEnvelope as exc:
        exc.request_id = request_id
        raise
    method = request.get("method")
    if not isinstance(method, str) or not method:
        raise BadEnvelope('method must be a non-empty string such as "kb.status"', request_id)
    params = request.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise BadEnvelope("params must be a JSON object", request_id)
    return request_id, method, params


def handle_line(ctx: CallContext, line: bytes) -> dict[str, Any]:
    """The response to one request line. Never raises for anything a client can send."""
    try:
        request_id, method, params = parse_request(line)
    except BadEnvelope as exc:
        return {"id": exc.request_id, "ok": False, "error": invalid_request(exc.message)}
    try:
        result = ops.invoke(ctx, method, params)
    except (Exception, SystemExit) as exc:  # every failure is a response; serving goes on
        body = error_body(exc)
        if body["code"] == "internal_error":  # a known system error needs no traceback
            log.error(
                "%s failed: %s", method, body["message"], exc_info=None if _known(exc) else exc
            )
        else:
            log.debug("%s refused: %s", method, body["message"])
        return {"id": request_id, "ok": False, "error": body}
    if method == "kb.approve" and isinstance(result, dict):
        from vouch.servers.warm_stop import after_forgetting

        after_forgetting(ctx.kb, result.get("approved") or [result])  # its memory held them
    return {"id": request_id, "ok": True, "result": result}


def _known(exc: BaseException) -> bool:
    from vouch.errors import VouchError

    return isinstance(exc, VouchError) and exc.code != "E200"


def encode(response: dict[str, Any]) -> bytes:
    """One response line. A result that cannot be serialised becomes an internal_error."""
    try:
        text = json.dumps(
            response, ensure_ascii=True, allow_nan=False, default=str, separators=(",", ":")
        )
    except (TypeError, ValueError, RecursionError) as exc:
        log.error("cannot serialise the result", exc_info=exc)
        fallback = {"id": response.get("id"), "ok": False, "error": error_body(exc)}
        text = json.dumps(fallback, ensure_ascii=True, default=str, separators=(",", ":"))
    return text.encode("ascii") + b"\n"


def read_lines(stream: IO[bytes], max_line: int) -> Iterator[bytes | None]:
    """Lines without their terminator; None stands for a line longer than `max_line`."""
    while True:
        line = stream.readline(max_line + 1)
        if not line:
            return
        if len(line) > max_line and not line.endswith(b"\n"):
            while True:  # skip the rest of the oversized line without holding it
                rest = stream.readline(_DISCARD_CHUNK)
                if not rest or rest.endswith(b"\n"):
                    break
            yield None
            continue
        yield line.rstrip(b"\r\n")


def serve(
    ctx: CallContext, stdin: IO[bytes], stdout: IO[bytes], max_line: int = MAX_LINE_BYTES
) -> int:
    """Answer requests from `stdin` on `stdout` until EOF; returns the exit status."""
    for line in read_lines(stdin, max_line):
        if line is None:
            response = {
                "id": None,
                "ok": False,
                "error": invalid_request(
                    f"request line longer than {max_line} bytes",
                    hint="register large documents with kb.register_source_from_path",
                ),
            }
        elif not line.strip():
            continue
        else:
            response = handle_line(ctx, line)
        try:
            stdout.write(encode(response))
            stdout.flush()
        except BrokenPipeError:
            log.info("client closed the response stream")
            return 0
    return 0


@contextmanager
def claimed_stdio() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """Private duplicates of fd 0/1 for the wire; fd 0 -> /dev/null, fd 1 -> stderr."""
    sys.stdout.flush()
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    try:
        yield wire_in, wire_out
    finally:
        sys.stdout.flush()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
        wire_in.close()
        with suppress(BrokenPipeError):  # the client hung up first
            wire_out.close()


def run_stdio(ctx: CallContext, max_line: int = MAX_LINE_BYTES) -> int:
    with claimed_stdio() as (wire_in, wire_out):
        log_ready(log, ctx, "JSONL")
        return serve(ctx, wire_in, wire_out, max_line)
