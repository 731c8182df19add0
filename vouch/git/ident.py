"""Who and when: a commit's author and committer lines, exactly as `git commit` writes them.

Names and e-mails come from git itself (`git var GIT_AUTHOR_IDENT` / `GIT_COMMITTER_IDENT`,
both at once): the GIT_AUTHOR_* / GIT_COMMITTER_* variables, `author.*` / `committer.*`
and `user.*` settings, EMAIL and git's clean-up of stray characters all apply as they do
for `git commit`. A date set in GIT_AUTHOR_DATE or GIT_COMMITTER_DATE, in any format git
accepts, is git's reading of it too. Otherwise the date is taken when the commit is
written, in-process: the current second and the local UTC offset at that second (daylight
saving and half-hour zones included), which is what git does.
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from vouch.errors import UsageError
from vouch.git.command import GitCommandFailed, config_value, run, start

ROLES = ("AUTHOR", "COMMITTER")
# what git reads to sign a commit: a change to any of these means asking git again
ENV_KEYS = (
    *(f"GIT_{role}_{part}" for role in ROLES for part in ("NAME", "EMAIL", "DATE")),
    "EMAIL",
    "TZ",
)
FALLBACK = {"user.name": "vouch", "user.email": "vouch@localhost"}  # nothing configured


@dataclass(frozen=True)
class Signature:
    """`Name <email>`, and the date git was told to use (`<seconds> <±hhmm>`); None: now."""

    who: str
    date: str | None

    def line(self, now: str) -> str:
        return f"{self.who} {self.date or now}"


def tz_offset(seconds: int) -> str:
    """The local UTC offset at `seconds` since the epoch, as git writes it (`+0530`)."""
    offset = time.localtime(seconds).tm_gmtoff
    minutes = abs(offset) // 60
    return f"{'-' if offset < 0 else '+'}{minutes // 60:02d}{minutes % 60:02d}"


def now_stamp() -> str:
    """`<seconds> <±hhmm>` for this second (git's `datestamp`)."""
    seconds = int(time.time())
    return f"{seconds} {tz_offset(seconds)}"


def env_key() -> tuple[str | None, ...]:
    return tuple(os.environ.get(k) for k in ENV_KEYS)


def signatures(root: Path) -> tuple[Signature, Signature]:
    """(author, committer) for a commit made in `root`, as git would sign it.

    Two `git var` processes run side by side. When git knows no identity (no user.name
    or user.email anywhere, where `git commit` would refuse), vouch signs as
    `vouch <vouch@localhost>` for the missing part, as it always has.
    """
    procs = [start(["var", f"GIT_{role}_IDENT"], root) for role in ROLES]
    outs = [p.output(check=False) for p in procs]
    if all(p.returncode == 0 for p in procs):
        return _parse(outs[0], ROLES[0]), _parse(outs[1], ROLES[1])
    overrides: list[str] = []
    for key, value in FALLBACK.items():
        if config_value(root, key) is None:
            overrides += ["-c", f"{key}={value}"]
    found = []
    for role in ROLES:
        try:
            found.append(_parse(run([*overrides, "var", f"GIT_{role}_IDENT"], root), role))
        except GitCommandFailed as exc:
            if "date" in exc.stderr:
                raise UsageError(
                    exc.stderr.strip().removeprefix("fatal: "),
                    hint=f"fix GIT_{role}_DATE (any format `git commit` accepts) or unset it",
                ) from exc
            raise
    return found[0], found[1]


def _parse(ident: str, role: str) -> Signature:
    """`Name <email> <seconds> <±hhmm>` from `git var`. The date is kept only when
    GIT_<role>_DATE fixed it; otherwise it is git's clock, taken again per commit."""
    who, seconds, zone = ident.strip().rsplit(" ", 2)
    return Signature(who, f"{seconds} {zone}" if os.environ.get(f"GIT_{role}_DATE") else None)


_SSH_ARMOR = (b"-----BEGIN SSH SIGNATURE-----", b"-----END SSH SIGNATURE-----")


def ssh_signing_key(header: bytes) -> str | None:
    """The SHA256 fingerprint (as `ssh-keygen -l` prints it) of the public key inside a
    commit header's SSH signature (`gpgsig`), or None when there is none. Read from the
    signature itself, so it needs no allowed-signers file: whether git trusts the key is
    `git verify-commit`'s question, which key signed is this one's."""
    start = header.find(_SSH_ARMOR[0])
    end = header.find(_SSH_ARMOR[1], start)
    if start < 0 or end < 0:
        return None
    armored = header[start + len(_SSH_ARMOR[0]) : end]
    try:
        raw = base64.b64decode(b"".join(line.strip() for line in armored.split(b"\n")))
        if not raw.startswith(b"SSHSIG"):
            return None
        (size,) = struct.unpack(">I", raw[10:14])  # after the magic and the version
        key = raw[14 : 14 + size]
    except (ValueError, struct.error):
        return None
    if not key or len(key) != size:
        return None
    digest = base64.b64encode(hashlib.sha256(key).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"
