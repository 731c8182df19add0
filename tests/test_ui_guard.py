"""`vouch ui` refuses what is not the person who started it (issue 37, item 3): another
origin, a missing or replayed CSRF token, a wrong Host header, a path outside its
routes, a missing or reused token — each refused with nothing decided (every ref, the
audit log and the work tree unchanged), and the same request then made properly is
decided, so each refusal is the guard's. A decision pins the commit its page showed."""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git
from gate_support import PERSON
from test_gate_hostile import edited_tree, rewrite
from test_gate_identity import (
    ADA,
    CAROL,
    HAS_SSH,
    _as,
    _commit_config,
    _propose,
    _sign_with,
    _ssh_key,
)
from ui_support import Client, review_set, running, state

from vouch.store.kb import KB, PROPOSAL_PREFIX


def _ready(kb: KB, client: Client, pid: str) -> tuple[str, str]:
    """Sign in and open the proposal's page (which pins it): (csrf, commit)."""
    client.login()
    page = client.get(f"/p/{pid}")
    assert page.status == 200, page.body
    return page.csrf(), page.commit()


def _approved(kb: KB, pid: str) -> bool:
    return not git(kb.root, "for-each-ref", PROPOSAL_PREFIX + pid).strip() and bool(
        list(kb.dir.glob(f"decided/*/{pid}.yaml"))
    )


def test_a_form_from_another_origin_decides_nothing(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    pid = review_set(kb)["cited"]
    with running(kb) as server:
        client = Client(server)
        csrf, commit = _ready(kb, client, pid)
        fields = [("csrf", csrf), ("commit", commit)]
        before = state(kb)
        for origin, extra in (
            ("http://evil.example", []),
            (f"http://localhost:{client.host.split(':')[1]}", []),
            ("null", []),
            (None, []),  # a write must say where it comes from
            ("own", [("Origin", "http://evil.example")]),  # two Origin headers
            ("own", [("Sec-Fetch-Site", "cross-site")]),
            ("own", [("Sec-Fetch-Site", "same-site")]),
        ):
            res = client.post(f"/p/{pid}/approve", fields, origin=origin, headers=extra)
            assert res.status == 403, (origin, extra, res)
        # a cross-site page's GET is refused too (it would pin what the page shows)
        res = client.request("GET", f"/p/{pid}", headers=[("Origin", "http://evil.example")])
        assert res.status == 403
        assert state(kb) == before
        done = client.post(f"/p/{pid}/approve", fields)
        assert done.status == 303 and done.headers["Location"] == "/"
    assert _approved(kb, pid)


def test_csrf_missing_wrong_or_from_another_session_decides_nothing(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    pid = review_set(kb)["cited"]
    with running(kb) as server:
        client = Client(server)
        csrf, commit = _ready(kb, client, pid)
        other = server.review.guard.new_session()  # another browser's session
        before = state(kb)
        for fields in (
            [("commit", commit)],
            [("csrf", ""), ("commit", commit)],
            [("csrf", csrf[:-1] + ("A" if csrf[-1] != "A" else "B")), ("commit", commit)],
            [("csrf", other.csrf), ("commit", commit)],  # replayed from another session
            [("csrf", csrf), ("csrf", csrf), ("commit", commit)],
        ):
            res = client.post(f"/p/{pid}/reject", [*fields, ("reason", "no")])
            assert res.status == 403, (fields, res)
            res = client.post(f"/p/{pid}/approve", fields)
            assert res.status == 403, (fields, res)
        # this session's token under the other session's cookie
        thief = Client(server, cookie=f"{server.review.guard.cookie_name}={other.sid}")
        res = thief.post(f"/p/{pid}/approve", [("csrf", csrf), ("commit", commit)])
        assert res.status == 403
        # a form sent as something else than a form
        res = client.post(
            f"/p/{pid}/approve", [("csrf", csrf), ("commit", commit)], kind="text/plain"
        )
        assert res.status == 415
        assert state(kb) == before
        done = client.post(
            f"/p/{pid}/reject", [("csrf", csrf), ("commit", commit), ("reason", "no")]
        )
        assert done.status == 303
    assert git(kb.root, "rev-parse", f"refs/vouch/rejected/{pid}").strip() == commit


def test_a_wrong_host_header_is_refused(kb_with_sources: KB) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: refused by Host."""
    kb = kb_with_sources
    pid = review_set(kb)["cited"]
    with running(kb) as server:
        client = Client(server)
        csrf, commit = _ready(kb, client, pid)
        port = client.host.split(":")[1]
        before = state(kb)
        for host in (f"evil.example:{port}", f"localhost:{port}", "127.0.0.1", "127.0.0.1:1", None):
            assert client.request("GET", "/", host=host).status == 403, host
            assert client.request("GET", f"/p/{pid}", host=host).status == 403, host
            res = client.request(
                "POST",
                f"/p/{pid}/approve",
                f"csrf={csrf}&commit={commit}".encode(),
                [("Content-Type", "application/x-www-form-urlencoded"),
                 ("Origin", f"http://{host}")],
                host=host,
            )  # fmt: skip
            assert res.status == 403, host
        two = client.request("GET", "/", headers=[("Host", "evil.example")])
        assert two.status == 403
        assert state(kb) == before
        assert client.get("/").status == 200


def test_paths_outside_the_routes_serve_nothing(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    pid = review_set(kb)["cited"]
    (kb.root / "secret.txt").write_text("TOP-SECRET-CONTENT\n")
    with running(kb) as server:
        client = Client(server)
        csrf, commit = _ready(kb, client, pid)
        before = state(kb)
        for path in (
            "/../secret.txt",
            "/%2e%2e/secret.txt",
            "/..%2fsecret.txt",
            "/p/..%2f..%2fsecret.txt",
            f"/p/{pid}/../../secret.txt",
            "/o/..%2F..%2F.git%2Fconfig",
            "/secret.txt",
            "/.git/config",
            "/.vouch/config.yaml",
            "//etc/passwd",
            "/static/style.css",
            "/favicon.ico",
            f"http://{client.host}/secret.txt",
            "/p/",
            f"/p/{pid}/",
            f"/p/{pid}%00",
            "/o/README.md",
        ):
            res = client.get(path)
            assert res.status == 404, (path, res.status)
            assert "TOP-SECRET" not in res.body and "[core]" not in res.body
        for path in ("/", f"/p/{pid}", f"/p/{pid}/merge", "/approve-together/../x", "/login"):
            res = client.post(path, [("csrf", csrf), ("commit", commit)])
            assert res.status == 404, (path, res.status)
        for method in ("PUT", "DELETE", "HEAD", "OPTIONS"):
            assert client.request(method, f"/p/{pid}/approve").status == 501, method
        assert state(kb) == before


def test_without_the_token_nothing_opens_and_the_token_works_once(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    pid = review_set(kb)["cited"]
    with running(kb) as server:
        token = server.review.guard.token
        stranger = Client(server)
        before = state(kb)
        for path in ("/", f"/p/{pid}", "/search?q=x", "/login", "/login?token=", "/login?token=x"):
            res = stranger.get(path)
            assert res.status == 403, (path, res.status)
            assert token not in res.body and pid not in res.body
        res = stranger.post(f"/p/{pid}/approve", [("csrf", "x"), ("commit", "0" * 40)])
        assert res.status == 403
        assert state(kb) == before  # nothing shown, so nothing pinned either
        me = Client(server)
        login = me.login()
        cookie = login.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert login.headers["Location"] == "/"
        assert me.get("/").status == 200
        assert me.get(f"/login?token={token}").status == 303  # a reload keeps the session
        late = Client(server)
        assert late.get(f"/login?token={token}").status == 403  # used: the link is spent
        assert late.get("/").status == 403
        forged = Client(server, cookie=f"{server.review.guard.cookie_name}=made-up")
        assert forged.get("/").status == 403


def test_a_proposal_rewritten_after_its_page_was_shown_is_refused(kb_with_sources: KB) -> None:
    """The form carries the commit the page showed: a branch moved since is refused —
    approve, reject, comment and approve together — and nothing is written."""
    kb = kb_with_sources
    made = review_set(kb)
    pid = made["cited"]
    with running(kb) as server:
        client = Client(server)
        csrf, commit = _ready(kb, client, pid)
        page = client.get(f"/p/{made['page']}")
        pins = re.findall(r'name="pin" value="([^"]+)"', page.body)
        # the claim it waits for was never shown: approving them together is refused
        before = state(kb)
        client.post("/approve-together", [("csrf", csrf), *(("pin", p) for p in pins)])
        assert state(kb) == before
        assert f"proposal {made['claim']} was not shown at" in client.get("/").body
        claim_page = client.get(f"/p/{made['claim']}")
        assert sorted(pins) == sorted(
            [
                f"{made['claim']}@{claim_page.commit()}",
                f"{made['page']}@{page_commit(kb, made['page'])}",
            ]
        )
        # the proposer rewrites both after the reviewer looked
        for target in (pid, made["claim"]):
            files = git(kb.root, "ls-tree", "-r", "--name-only", PROPOSAL_PREFIX + target)
            path = next(p for p in files.split() if p.startswith(".vouch/claims/"))
            forged = git(kb.root, "show", f"{PROPOSAL_PREFIX}{target}:{path}").replace(
                "review", "reviews"
            )
            rewrite(kb, target, edited_tree(kb, target, {path: forged.encode()}))
        before = state(kb)
        fields = [("csrf", csrf), ("commit", commit)]
        for verb, more in (
            ("approve", []),
            ("reject", [("reason", "x")]),
            ("comment", [("text", "hm")]),
        ):
            res = client.post(f"/p/{pid}/{verb}", [*fields, *more])
            assert res.status == 303 and res.headers["Location"] == f"/p/{pid}", verb
            assert state(kb) == before, verb
        res = client.post("/approve-together", [("csrf", csrf), *(("pin", p) for p in pins)])
        assert res.status == 303
        assert state(kb) == before
        shown = client.get(f"/p/{pid}")  # the refusal is said, and the new commit is shown
        assert "changed" in shown.body and shown.commit() != commit
        together = rf"proposal {made['claim']} is now commit \w+, not the \w+ this page showed"
        assert re.search(together, shown.body)  # approving together: the page's own check
        assert shown.commit() == git(kb.root, "rev-parse", PROPOSAL_PREFIX + pid).strip()
        # another tab showed the new commits (pinning them): a form from the old page is
        # still about the old commit, and refused
        client.get(f"/p/{made['claim']}")
        before = state(kb)
        for verb, more in (("approve", []), ("reject", [("reason", "x")])):
            res = client.post(f"/p/{pid}/{verb}", [*fields, *more])
            assert res.status == 303 and res.headers["Location"] == f"/p/{pid}", verb
            assert state(kb) == before, verb
        res = client.post("/approve-together", [("csrf", csrf), *(("pin", p) for p in pins)])
        assert state(kb) == before
        # the form of the page as it is now decides
        fresh = [("csrf", csrf), ("commit", shown.commit()), ("reason", "reworded")]
        assert client.post(f"/p/{pid}/reject", fresh).headers["Location"] == "/"
        assert git(kb.root, "rev-parse", f"refs/vouch/rejected/{pid}").strip() == shown.commit()


def page_commit(kb: KB, pid: str) -> str:
    return git(kb.root, "rev-parse", PROPOSAL_PREFIX + pid).strip()


def test_a_declared_agent_decides_nothing_through_the_page(
    kb_with_sources: KB, monkeypatch
) -> None:
    """The page decides as the CLI does: while VOUCH_AGENT declares an agent, refused."""
    kb = kb_with_sources
    pid = review_set(kb)["cited"]
    monkeypatch.setenv("VOUCH_AGENT", "bob")
    with running(kb) as server:
        client = Client(server)
        csrf, commit = _ready(kb, client, pid)
        before = state(kb)
        res = client.post(f"/p/{pid}/approve", [("csrf", csrf), ("commit", commit)])
        assert res.status == 303 and res.headers["Location"] == f"/p/{pid}"
        assert state(kb) == before
        assert "E104" in client.get(f"/p/{pid}").body


def test_hostile_text_is_escaped_and_only_the_page_own_script_runs(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    pid = review_set(kb)["cited"]
    with running(kb) as server:
        client = Client(server)
        client.login()
        page = client.get(f"/p/{pid}")
    assert "<script>alert(1)" not in page.body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.body
    policy = page.headers["Content-Security-Policy"]
    nonce = re.search(r"script-src 'nonce-([^']+)'", policy)
    assert nonce and "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    scripts = re.findall(r"<script([^>]*)>", page.body)
    assert scripts == [f' nonce="{nonce.group(1)}"']
    assert page.headers["X-Frame-Options"] == "DENY"


@contextlib.contextmanager
def _started(cmd: list[str], kb: KB, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """`cmd` running in the knowledge base; killed if the test leaves it running."""
    proc = subprocess.Popen(
        cmd, cwd=kb.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_vouch_ui_prints_a_one_time_url_and_stops_when_idle_or_interrupted(
    kb_with_sources: KB,
) -> None:
    kb = kb_with_sources
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "vouch", "ui"]
    with _started([*cmd, "--idle-seconds", "1"], kb, env) as proc:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    with running(kb) as server:  # the address it listens on: loopback only
        assert server.server_address[0] == "127.0.0.1"
        assert server.review.guard.login_url().startswith("http://127.0.0.1:")
    assert re.search(r"http://127\.0\.0\.1:\d+/login\?token=[\w-]{40,}", out)
    assert PERSON in out and "stopped: idle" in err
    with _started([*cmd, "--idle-seconds", "0"], kb, env) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://(127\.0\.0\.1:\d+)(/login\?token=[\w-]+)", line)
        assert url, line
        for _ in range(2):  # the browser signs in; then someone else tries the spent link
            conn = http.client.HTTPConnection(url.group(1), timeout=10)
            conn.request("GET", url.group(2))
            conn.getresponse().read()
            conn.close()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0 and "stopped" in err and "Traceback" not in err
    # the terminal shows each sign-in, and the refused reuse of the link
    assert "a browser signed in" in err and "spent or wrong link was refused" in err


@pytest.mark.skipif(not HAS_SSH, reason="ssh-keygen is not installed")
def test_the_page_decides_as_the_cli_signed_when_the_branch_requires_it(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No new authority: under `review.require_signed_decisions` the page's approval is
    the person's signed decision, and its proposer's own is refused, as at the CLI."""
    kb = kb_with_sources
    allowed = kb.root / "allowed_signers"
    ada_key = _ssh_key(tmp_path, ADA[1], allowed)
    carol_key = _ssh_key(tmp_path, CAROL[1], allowed)
    git(kb.root, "add", "allowed_signers")
    _commit_config(kb, require_signed_decisions=True, approvers=[ADA[1], CAROL[1]])
    for key, value in (
        ("gpg.format", "ssh"),
        ("gpg.ssh.allowedSignersFile", str(allowed)),
        ("commit.gpgsign", "true"),
    ):
        git(kb.root, "config", key, value)
    _sign_with(kb.root, ada_key)
    _as(monkeypatch, ADA)
    pid = _propose(run_cli, kb, "Strictly reviewed claim")
    with running(kb) as server:  # Ada's page: her own proposal is not hers to approve
        client = Client(server)
        csrf, commit = _ready(kb, client, pid)
        before = state(kb)
        res = client.post(f"/p/{pid}/approve", [("csrf", csrf), ("commit", commit)])
        assert res.headers["Location"] == f"/p/{pid}" and state(kb) == before
        assert "E104" in client.get(f"/p/{pid}").body
    _as(monkeypatch, CAROL)
    _sign_with(kb.root, carol_key)
    base = git(kb.root, "rev-parse", "HEAD").strip()
    with running(kb) as server:  # Carol's page, Carol's key
        client = Client(server)
        csrf, commit = _ready(kb, client, pid)
        res = client.post(f"/p/{pid}/approve", [("csrf", csrf), ("commit", commit)])
        assert res.headers["Location"] == "/"
    decision = git(kb.root, "log", "-1", "--format=%cn|%G?|%GS", "HEAD").strip()
    assert decision == f"{CAROL[0]}|G|{CAROL[1]}", decision
    lint = run_cli("lint", "--since", base, "--json", cwd=kb.root).json()
    assert lint["errors"] == 0, lint["issues"]


def test_a_proposal_the_page_never_showed_is_not_approved_from_a_form(
    kb_with_sources: KB,
) -> None:
    """A form for a proposal nobody opened — its commit read from git, the session's
    CSRF token from another page — decides nothing (the ninth outsider, A12)."""
    kb = kb_with_sources
    made = review_set(kb)
    with running(kb) as server:
        client = Client(server)
        csrf, _ = _ready(kb, client, made["cited"])  # another proposal's page
        never = made["claim"]
        commit = git(kb.root, "rev-parse", PROPOSAL_PREFIX + never).strip()
        before = state(kb)
        client.post(f"/p/{never}/approve", [("csrf", csrf), ("commit", commit)])
        assert state(kb) == before and not _approved(kb, never)


def test_invisible_format_characters_are_written_out_in_the_page() -> None:
    """A right-to-left override in a claim's text is shown as `\\u202e`, not obeyed: the
    page cannot draw `$1000000` from the text `0000001$` (the ninth outsider, A14)."""
    from vouch.servers.web.markup import escape

    shown = escape("limit is \u202e0000001$\u202c per day; a\u200bb")
    assert "\u202e" not in shown and "\u200b" not in shown
    assert "\\u202e0000001$\\u202c" in shown and "a\\u200bb" in shown
    assert escape("ok <b>") == "ok &lt;b&gt;"


@pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/proc/net/tcp").exists(),
    reason="needs root (to connect as another user) and Linux's socket table",
)
def test_another_local_user_is_refused_even_with_the_cookie(kb_with_sources: KB) -> None:
    """A browser hands the 127.0.0.1 session cookie to any port of 127.0.0.1, so another
    user of the machine can obtain it (the ninth outsider, A22): a connection from
    another user is refused before anything else, cookie, CSRF token and all."""
    kb = kb_with_sources
    made = review_set(kb)
    pid = made["cited"]
    with running(kb) as server:
        client = Client(server)
        csrf, commit = _ready(kb, client, pid)
        cookie = client.cookie
        port = server.server_address[1]
        script = (
            "import http.client, sys\n"
            f"c = http.client.HTTPConnection('127.0.0.1', {port}, timeout=10)\n"
            f"body = 'csrf={csrf}&commit={commit}'\n"
            f"c.request('POST', '/p/{pid}/approve', body, {{'Host': '127.0.0.1:{port}', "
            f"'Origin': 'http://127.0.0.1:{port}', 'Cookie': {cookie!r}, "
            "'Content-Type': 'application/x-www-form-urlencoded'})\n"
            "print(c.getresponse().status)\n"
        )
        before = state(kb)
        done = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
             "-I", "-c", script],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.stdout.strip() == "403", done.stderr
        assert state(kb) == before and not _approved(kb, pid)
