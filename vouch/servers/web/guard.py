"""Who may ask the review page anything (issue 37, item 3).

The page is for the person who started it. It listens on 127.0.0.1 only; the URL it
prints carries a secret token that works once: the first visit trades it for a session
cookie (HttpOnly, SameSite=Strict), so a URL found later in a shell history or a
screenshot opens nothing. Every request must name the server itself as its Host (a
DNS-rebinding page names its own domain) and, when the browser says where it comes
from (Origin, Sec-Fetch-Site), come from the page itself (a cross-site form or fetch is
refused). Every POST carries the session's CSRF token, compared in constant time; a
token from another session is refused.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any


class Refused(Exception):
    """A request the guard turns away: `status` and a short reason (never the secrets)."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class Session:
    sid: str
    csrf: str
    flash: list[tuple[str, str]] = field(default_factory=list)  # (level, text) to show once


@dataclass
class Guard:
    host: str  # "127.0.0.1:PORT": the only Host and origin the page answers
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    used: bool = False
    sessions: list[Session] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    @property
    def cookie_name(self) -> str:
        # cookies ignore the port: two pages on 127.0.0.1 must not read each other's
        return f"vouch-ui-{self.host.rsplit(':', 1)[-1]}"

    def login_url(self) -> str:
        return f"{self.origin}/login?token={self.token}"

    def check_origin(self, headers: Any, *, writes: bool) -> None:
        """Refuse another Host (DNS rebinding) or another origin (cross-site forms and
        fetches); a write must say it comes from the page itself."""
        hosts = headers.get_all("Host") or []
        if len(hosts) != 1 or hosts[0] != self.host:
            raise Refused(403, "wrong Host: this page answers only to " + self.host)
        origin = headers.get_all("Origin") or []
        if len(origin) > 1 or (origin and origin[0] != self.origin):
            raise Refused(403, "request from another origin")
        site = headers.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            raise Refused(403, "cross-site request")
        if writes and not origin:
            raise Refused(403, "a form must come from this page (no Origin header)")

    def login(self, given: str, cookie_header: str | None) -> Session:
        """Trade the one-time token for a new session; a visit with a session already
        keeps it (a reload of the login URL)."""
        known = self.session(cookie_header)
        if known is not None:
            return known
        with self._lock:
            if self.used or not hmac.compare_digest(given.encode(), self.token.encode()):
                raise Refused(
                    403,
                    "this link is not valid (each link works once): stop `vouch ui` and "
                    "start it again for a new one — and if you did not open it yourself, "
                    "someone else did: stop it now",
                )
            self.used = True
        return self.new_session()

    def new_session(self) -> Session:
        """A session of its own (its cookie, its CSRF token)."""
        made = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32))
        with self._lock:
            self.sessions.append(made)
        return made

    def session(self, cookie_header: str | None) -> Session | None:
        if not cookie_header:
            return None
        try:
            jar = SimpleCookie(cookie_header)
        except CookieError:
            return None
        morsel = jar.get(self.cookie_name)
        if morsel is None:
            return None
        given = morsel.value.encode()
        found = None
        for s in list(self.sessions):  # every one compared: the time says nothing
            if hmac.compare_digest(given, s.sid.encode()):
                found = s
        return found

    def require_session(self, cookie_header: str | None) -> Session:
        found = self.session(cookie_header)
        if found is None:
            raise Refused(
                403,
                "not signed in: open the URL `vouch ui` printed (it works once; start "
                "vouch ui again for a new one)",
            )
        return found

    @staticmethod
    def check_csrf(session: Session, given: str | None) -> None:
        if not given or not hmac.compare_digest(given.encode(), session.csrf.encode()):
            raise Refused(403, "missing or wrong form token: reload the page and try again")

    def cookie(self, session: Session) -> str:
        return f"{self.cookie_name}={session.sid}; HttpOnly; SameSite=Strict; Path=/"
