"""Helpers for the review page's tests (tests/test_ui_*.py): a `vouch ui` server on a
real socket in this process, a plain HTTP client that can lie about anything, and the
proposals a review walks through."""

from __future__ import annotations

import contextlib
import http.client
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlencode

from conftest import git
from gate_support import a_source, call

from vouch.methods.context import CallContext
from vouch.servers.web import app
from vouch.store.kb import KB


@contextlib.contextmanager
def running(kb: KB) -> Iterator[app.Server]:
    """`vouch ui` for the git user of the test repositories, as the CLI starts it."""
    server = app.start(CallContext(kb_path=str(kb.root), transport="cli"))
    thread = threading.Thread(target=app.serve, args=(server, 0), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(10)


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: str

    def csrf(self) -> str:
        return re.findall(r'name="csrf" value="([^"]+)"', self.body)[0]

    def commit(self) -> str:
        return re.findall(r'name="commit" value="([0-9a-f]+)"', self.body)[0]


@dataclass
class Client:
    server: app.Server
    cookie: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return self.server.review.guard.host

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: list[tuple[str, str]] | None = None,
        *,
        host: str | None = "own",
    ) -> Answer:
        """`path` is sent as given; Host is the server's unless `host` names another
        (None: no Host header at all)."""
        address = self.server.server_address
        conn = http.client.HTTPConnection(str(address[0]), int(address[1]), timeout=20)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            if host is not None:
                conn.putheader("Host", self.host if host == "own" else host)
            if self.cookie:
                conn.putheader("Cookie", self.cookie)
            for name, value in headers or []:
                conn.putheader(name, value)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            res = conn.getresponse()
            return Answer(res.status, res.headers, res.read().decode("utf-8", "replace"))
        finally:
            conn.close()

    def login(self) -> Answer:
        token = self.server.review.guard.token
        answer = self.request("GET", f"/login?token={token}")
        assert answer.status == 303, answer
        self.cookie = answer.headers["Set-Cookie"].split(";")[0]
        return answer

    def get(self, path: str) -> Answer:
        return self.request("GET", path)

    def post(
        self,
        path: str,
        fields: list[tuple[str, str]],
        *,
        origin: str | None = "own",
        headers: list[tuple[str, str]] | None = None,
        kind: str = "application/x-www-form-urlencoded",
    ) -> Answer:
        sent = [("Content-Type", kind), *(headers or [])]
        if origin is not None:
            sent.append(("Origin", f"http://{self.host}" if origin == "own" else origin))
        return self.request("POST", path, urlencode(fields).encode(), sent)


def state(kb: KB) -> tuple[str, str, str]:
    """What a decision changes: every ref, the audit log, the work tree's status."""
    return (
        git(kb.root, "for-each-ref", "--format=%(refname) %(objectname)"),
        (kb.dir / "audit.log.jsonl").read_text(),
        git(kb.root, "status", "--porcelain", "--untracked-files=all"),
    )


def review_set(kb: KB) -> dict[str, str]:
    """The proposals a review walks through, by an agent (alice): a claim citing two
    lines of the deploy runbook (to comment on and reject), and a claim with the page
    that lists it (linked: the page waits for the claim). Nobody has looked at them."""
    sid = a_source(kb)
    cited = call(
        kb,
        "kb.propose_claim",
        {
            "text": "Rollbacks need no review <script>alert(1)</script>",
            "evidence": [f"{sid}:L8-L9"],
        },
    )
    claim = call(kb, "kb.propose_claim", {"text": "Deploys need two reviewers.", "evidence": [sid]})
    page = call(
        kb,
        "kb.propose_page",
        {"title": "Deploy rules", "body": "Two reviewers.", "claims": [claim["claim_id"]]},
    )
    assert cited["valid"] and claim["valid"] and page["valid"], (cited, claim, page)
    return {
        "cited": cited["proposal_id"],
        "claim": claim["proposal_id"],
        "page": page["proposal_id"],
    }
