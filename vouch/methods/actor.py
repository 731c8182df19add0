"""Who is acting.

The identity is a git identity (`vouch.gate.identity`): at the CLI a declared agent
(VOUCH_AGENT) run by the git user, else the git user — a
person at their own terminal, as `git var GIT_COMMITTER_IDENT` names them. `--as` is a
label recorded beside the identity, never instead of it. Over an agent transport (JSONL,
MCP) only the agent the person who started the server declared: VOUCH_AGENT, then config
`agent`. Nothing a client sends (a request parameter, an MCP client name) is ever an
identity, and a server with no declared agent never falls back to the git user: it only
reads (DESIGN §4.1).
"""

from __future__ import annotations

import os

from vouch.core import yamlio
from vouch.errors import GateRefused, UsageError
from vouch.gate.identity import Identity, agent_email, check_name, check_person_email
from vouch.store.kb import KB

AGENT_HINT = (
    "start the server with VOUCH_AGENT=<agent name> (e.g. `VOUCH_AGENT=claude-code "
    "vouch serve`), or set `agent: <name>` in .vouch/config.yaml"
)


def configured_actor(kb: KB, explicit: str | None = None, *, server: bool = False) -> str | None:
    """The agent named by `explicit` (a library caller's declared agent), VOUCH_AGENT or
    — for a server only — config `agent`; None when none is set. At the CLI a person's
    terminal is theirs: a committed `agent:` never makes everyone who runs vouch an agent
    (a pull request could set it), and `VOUCH_AGENT=` (set, empty) means none. A name
    holding control or format characters is refused."""
    env = os.environ.get("VOUCH_AGENT")
    from_config = kb.config.get("agent") if server and env is None else None
    for candidate in (explicit, env, from_config):
        if isinstance(candidate, str) and candidate.strip():
            if not yamlio.is_storable_text(candidate):
                raise UsageError(f"actor name {candidate!r} holds bytes that are not UTF-8")
            return check_name(candidate, "agent name")
    return None


def person(kb: KB) -> Identity:
    """The git identity of whoever runs this process (`git var GIT_COMMITTER_IDENT`)."""
    name, email = kb.repo.identity()
    return Identity(check_name(name, "git user name"), check_person_email(email))


def identity(kb: KB, agent: str | None, label: str | None = None) -> Identity:
    """The principal acting: the declared `agent`, run by the git user, or the git user;
    `label` (`--as`) recorded beside it."""
    if label is not None:
        if not yamlio.is_storable_text(label):
            raise UsageError(f"--as {label!r} holds bytes that are not UTF-8")
        label = check_name(label, "--as label") if label.strip() else None
    operator = person(kb)
    if agent is None:
        return Identity(operator.name, operator.email, label=label)
    return Identity(agent, agent_email(agent), agent=True, operator=operator.who, label=label)


def resolve_actor(kb: KB, explicit: str | None = None) -> str:
    """The acting principal's name (a declared agent's, else the git user's); `explicit`
    is only a label now and never replaces it."""
    return identity(kb, configured_actor(kb), explicit).name


def declared_agent(kb: KB, transport: str) -> str:
    """The agent a server acts as; refused (E104) when its starter declared none.

    GateRefused rather than UsageError: the request itself is fine and the agent cannot
    fix it by changing it; only the person who starts the server can.
    """
    actor = configured_actor(kb, server=True)
    if actor is None:
        raise GateRefused(
            f"this {transport} server has no declared agent, so it only reads: "
            "writes need to know who is writing",
            hint=AGENT_HINT,
        )
    return actor
