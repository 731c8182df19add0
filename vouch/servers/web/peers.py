"""Who is on the other end of a loopback connection: the page answers only the person
who started it.

A browser sends a 127.0.0.1 cookie to every port of 127.0.0.1 (a cookie does not know
ports, and another port is the same site), so any other local user who gets the
reviewer's browser to visit their own server on 127.0.0.1 receives the session cookie —
and with it, from a plain HTTP client that types the right Host and Origin, could decide
as the reviewer (the ninth outsider, A22). The token and the cookie are not enough on a
shared machine; so each connection's peer is looked up in the kernel's socket table
(`/proc/net/tcp`: the connecting socket's owner) and a connection from another user is
refused before anything is read. Where the table cannot be read (not Linux), nothing is
known, and the token and cookie are the guard, as the threat model says.
"""

from __future__ import annotations

import os
from pathlib import Path

_TABLE = Path("/proc/net/tcp")


def _hex(address: tuple[str, int]) -> str:
    """`127.0.0.1:8080` as the kernel writes it: little-endian address, port."""
    host, port = address
    parts = [int(p) for p in host.split(".")]
    return "".join(f"{b:02X}" for b in reversed(parts)) + f":{port:04X}"


def owner(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid that owns the client end of this loopback connection, None when unknown."""
    try:
        rows = _TABLE.read_text().splitlines()[1:]
    except OSError:
        return None
    local, remote = _hex(client), _hex(server)
    for row in rows:
        cols = row.split()
        if len(cols) > 7 and cols[1] == local and cols[2] == remote:
            return int(cols[7])
    return None


def same_user(client: tuple[str, int], server: tuple[str, int]) -> bool:
    """Whether the connecting process is this user's (True when it cannot be told)."""
    if not _TABLE.exists():
        return True
    found = owner(client, server)
    return found is None or found == os.getuid()
