"""The review page's routes and its HTTP server (the standard library's).

A fixed table of routes, matched against the raw request path: anything else is a 404
(there is no route over the filesystem, so `/../`, `%2e%2e` and absolute paths name
nothing). Every request passes `guard` first. Requests are answered one at a time (the
knowledge base and its git processes are shared), each under a Content-Security-Policy
that lets only this response's own inline style and script run.
"""

from __future__ import annotations

import contextlib
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote

from vouch.core import ids
from vouch.errors import NotFound, VouchError
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.servers.web import actions, layout, pages, peers, proposal
from vouch.servers.web.guard import Guard, Refused, Session
from vouch.servers.web.markup import Html

log = logging.getLogger("vouch.ui")

MAX_BODY = 64 * 1024
IDLE_SECONDS = 1800
_PROPOSAL = r"(\d{8}-\d{6}-[0-9a-f]{8})"
_OBJECT = r"([a-z0-9-]{1,80}|[0-9a-f]{64})"
GETS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"/"), "queue"),
    (re.compile(r"/login"), "login"),
    (re.compile(r"/search"), "search"),
    (re.compile(rf"/p/{_PROPOSAL}"), "proposal"),
    (re.compile(rf"/p/{_PROPOSAL}/(next|prev)"), "step"),
    (re.compile(rf"/o/{_OBJECT}"), "object"),
]
POSTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"/p/{_PROPOSAL}/(approve|reject|comment)"), "decide"),
    (re.compile(r"/approve-together"), "together"),
]


class Review:
    """The state one `vouch ui` keeps: the CLI's call context, the guard, the time of
    the last request (for the idle stop), and the lock requests take turns on."""

    def __init__(self, ctx: CallContext, host: str):
        self.ctx = ctx
        self.guard = Guard(host)
        self.lock = threading.Lock()
        self.last_seen = time.monotonic()
        who = ctx.identity()
        self.reviewer = who.describe() + ("" if ctx.may_decide else " (may not decide)")

    # -- pages -----------------------------------------------------------------------
    def get(
        self, name: str, args: tuple[str, ...], query: dict[str, list[str]], s: Session
    ) -> pages.Page:
        ctx = self.ctx
        if name == "queue":
            return pages.queue(actions.pending_rows(ctx))
        if name == "proposal":
            pid = args[0]
            data = ops.invoke(ctx, "kb.read_proposal", {"id": pid})  # pins it, as `vouch show`
            return proposal.render(data, s.csrf, linked=actions.linked(ctx, data))
        if name == "object":
            oid = args[0]
            if not (ids.is_object_id(oid) or ids.is_source_id(oid)):
                raise NotFound(f"no object {oid}")
            why = log_ = None
            problem = None
            try:
                why = ops.invoke(ctx, "kb.why", {"id": oid})
                log_ = ops.invoke(ctx, "kb.log", {"id": oid, "limit": 50})
            except VouchError as exc:
                problem = _said(exc)
            graph = None
            with contextlib.suppress(VouchError):
                graph = ops.invoke(ctx, "kb.graph", {"id": oid, "depth": 1, "max_nodes": 60})
            return pages.explain(why, log_, oid, problem, graph)
        if name == "search":
            form = {k: v[0] for k, v in query.items() if v and k in _SEARCH_FIELDS}
            if not form.get("q", "").strip():
                return pages.search(form, None, None)
            try:
                answer = ops.invoke(ctx, "kb.search", _search_params(form))
            except VouchError as exc:
                return pages.search(form, None, _said(exc))
            return pages.search(form, answer, None)
        raise NotFound("no such page")

    def step(self, pid: str, way: str) -> str:
        """Where j/k go from a proposal: the next or previous open one, else the queue
        (the order is read only when asked, so a proposal's page does not list them)."""
        order = [str(r["proposal_id"]) for r in actions.pending_rows(self.ctx)]
        later = [p for p in order if p > pid] if way == "next" else [p for p in order if p < pid]
        if not later:
            return "/"
        return "/p/" + (later[0] if way == "next" else later[-1])

    # -- forms -----------------------------------------------------------------------
    def post(self, name: str, args: tuple[str, ...], form: dict[str, list[str]], s: Session) -> str:
        """Do what the form asks; where to go next (a message waits in the session)."""
        ctx = self.ctx
        back = f"/p/{args[0]}" if args else "/"
        try:
            if name == "together":
                done = actions.approve_together(ctx, form)
                s.flash.append(
                    (
                        "ok",
                        "approved together: "
                        + ", ".join(r["proposal_id"] for r in done.get("approved", [done])),
                    )
                )
                return "/"
            pid, verb = args
            if verb == "approve":
                done = actions.approve(ctx, pid, form)
                s.flash.append(("ok", f"approved {pid} (commit {str(done.get('commit'))[:12]})"))
                return "/"
            if verb == "reject":
                actions.reject(ctx, pid, form)
                s.flash.append(("ok", f"rejected {pid}"))
                return "/"
            actions.comment(ctx, pid, form)
            s.flash.append(("ok", f"commented on {pid}"))
            return back
        except VouchError as exc:
            s.flash.append(("error", _said(exc)))
            return back


_SEARCH_FIELDS = (
    *("q", "kind", "type", "status", "tag", "mode", "top", "pending"),
    *("speaker", "since", "until", "threshold"),
)


def _search_params(form: dict[str, str]) -> dict[str, Any]:
    """The CLI's filters: --kind, --type, --status, --tags, --mode, --top,
    --include-pending, --speaker, --since, --until, --threshold."""
    params: dict[str, Any] = {"query": form["q"], "envelope": True}

    def listed(name: str) -> list[str]:
        return [v.strip() for v in form.get(name, "").split(",") if v.strip()]

    if form.get("kind"):
        params["kinds"] = [form["kind"]]
    if listed("type"):
        params["types"] = listed("type")
    if listed("status"):
        params["statuses"] = listed("status")
    if listed("tag"):
        params["tags"] = listed("tag")
    if form.get("mode") in ("fts", "vector"):
        params["mode"] = form["mode"]
    if form.get("top", "").strip():
        params["limit"] = int(form["top"]) if form["top"].strip().isdigit() else form["top"]
    if form.get("pending"):
        params["include_pending"] = True
    if listed("speaker"):
        params["speakers"] = listed("speaker")
    for name in ("since", "until"):
        if form.get(name, "").strip():
            params[name] = form[name].strip()
    if form.get("threshold", "").strip():
        try:
            params["threshold"] = float(form["threshold"])
        except ValueError:
            params["threshold"] = form["threshold"]  # refused by the method, with its reason
    return params


def _said(exc: VouchError) -> str:
    hint = getattr(exc, "hint", None)
    return f"error[{exc.code}]: {exc.message}" + (f" ({hint})" if hint else "")


def _route(
    table: list[tuple[re.Pattern[str], str]], path: str
) -> tuple[str, tuple[str, ...]] | None:
    for pattern, name in table:
        m = pattern.fullmatch(path)
        if m:
            return name, tuple(g for g in m.groups() if g is not None)
    return None


class Handler(BaseHTTPRequestHandler):
    server: Server
    timeout = 15  # a client that sends nothing for this long is dropped
    server_version = "vouch-ui"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        self._serve(False)

    def do_POST(self) -> None:
        self._serve(True)

    def _serve(self, writes: bool) -> None:
        review = self.server.review
        review.last_seen = time.monotonic()
        nonce = secrets.token_urlsafe(16)
        try:
            here = (str(self.server.server_address[0]), int(self.server.server_address[1]))
            if not peers.same_user((str(self.client_address[0]), self.client_address[1]), here):
                raise Refused(403, "this page answers only the user who started it")
            review.guard.check_origin(self.headers, writes=writes)
            path, _, raw_query = self.path.partition("?")
            found = _route(POSTS if writes else GETS, path)
            if found is None:
                raise Refused(404, "no such page")
            name, args = found
            cookie = self.headers.get("Cookie")
            if name == "login":
                token = (parse_qs(raw_query).get("token") or [""])[0]
                known = review.guard.session(cookie)
                try:
                    session = review.guard.login(token, cookie)
                except Refused:
                    log.warning("a sign-in with a spent or wrong link was refused")
                    raise
                if session is not known:  # the terminal says so: a second one is a thief
                    log.warning("a browser signed in (the link is spent)")
                self._redirect("/", review.guard.cookie(session))
                return
            session = review.guard.require_session(cookie)
            if name == "step":
                with review.lock:
                    self._redirect(review.step(*args))
                return
            if writes:
                form = self._form()
                tokens = form.get("csrf") or []
                review.guard.check_csrf(session, tokens[0] if len(tokens) == 1 else None)
                with review.lock:
                    where = review.post(name, args, form, session)
                self._redirect(where)
                return
            query = parse_qs(raw_query, max_num_fields=50)
            with review.lock:
                title, kind, body = review.get(name, args, query, session)
            flash, session.flash = session.flash, []
            self._html(
                200,
                layout.page(
                    title, body, nonce=nonce, kind=kind, reviewer=review.reviewer, flash=flash
                ),
                nonce,
            )
        except Refused as exc:
            self._plain(exc.status, exc.reason)
        except VouchError as exc:
            status = 404 if isinstance(exc, NotFound) or exc.code == "E103" else 400
            title, kind, body = pages.refused(status, _said(exc))
            self._html(
                status,
                layout.page(title, body, nonce=nonce, kind=kind, reviewer=review.reviewer),
                nonce,
            )
        except Exception:  # a page must never take the server down; the trace goes to the log
            log.exception("vouch ui: %s %s failed", self.command, self.path)
            self._plain(500, "internal error (see the terminal running vouch ui)")

    def _form(self) -> dict[str, list[str]]:
        if self.headers.get("Transfer-Encoding"):
            raise Refused(411, "send a Content-Length")
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise Refused(415, "a form is sent as application/x-www-form-urlencoded")
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            raise Refused(411, "send a Content-Length") from None
        if not 0 <= length <= MAX_BODY:
            raise Refused(413, f"a form is at most {MAX_BODY} bytes")
        body = self.rfile.read(length)
        try:
            return parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=200)
        except (UnicodeDecodeError, ValueError):
            raise Refused(400, "the form could not be read") from None

    def _headers(self, status: int, kind: str, length: int, nonce: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "same-origin")
        allowed = f"'nonce-{nonce}'" if nonce else "'none'"
        self.send_header(
            "Content-Security-Policy",
            f"default-src 'none'; style-src {allowed}; script-src {allowed}; "
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        )

    def _html(self, status: int, text: Html, nonce: str) -> None:
        data = text.encode("utf-8")
        self._headers(status, "text/html; charset=utf-8", len(data), nonce)
        self.end_headers()
        self.wfile.write(data)

    def _plain(self, status: int, text: str) -> None:
        data = (text + "\n").encode("utf-8")
        self._headers(status, "text/plain; charset=utf-8", len(data))
        self.end_headers()
        self.wfile.write(data)

    def _redirect(self, where: str, cookie: str | None = None) -> None:
        self._headers(303, "text/plain; charset=utf-8", 0)
        self.send_header("Location", quote(where, safe="/"))
        if cookie:
            self.send_header("Set-Cookie", cookie)
        self.end_headers()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    review: Review


def start(ctx: CallContext, port: int = 0) -> Server:
    """Bind 127.0.0.1 (a random port unless `port`): the server, not yet serving."""
    server = Server(("127.0.0.1", port), Handler)
    host = f"127.0.0.1:{server.server_address[1]}"
    try:
        server.review = Review(ctx, host)
    except BaseException:
        server.server_close()
        raise
    return server


def serve(
    server: Server, idle_seconds: float = IDLE_SECONDS, on_idle: Callable[[], None] | None = None
) -> None:
    """Answer until shut down, or until `idle_seconds` pass without a request (0:
    never). Ctrl-C reaches the caller as KeyboardInterrupt."""
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(min(1.0, idle_seconds / 4)):
            if time.monotonic() - server.review.last_seen >= idle_seconds:
                if on_idle:
                    on_idle()
                server.shutdown()
                return

    if idle_seconds > 0:
        threading.Thread(target=watch, name="vouch-ui-idle", daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        stop.set()
        server.server_close()
