"""Who may decide: a person, never a declared agent unless its server's starter allowed it.

A decision (approve, reject, promote, anchoring the audit chain, importing a bundle)
vouches for knowledge as a reviewer. At the CLI the person at the terminal decides, but
not while VOUCH_AGENT declares that an agent is acting: the command
would then run as that agent (DESIGN §4.1). Over a transport the agent decides only when
the person who started the server passed `--allow-decisions`.
"""

from __future__ import annotations

from vouch.errors import GateRefused
from vouch.methods.context import CallContext

AGENT_DOES_NOT_DECIDE = (
    "VOUCH_AGENT (or `agent:` in .vouch/config.yaml) declares an agent, and agents do "
    "not decide; unset it to decide as yourself"
)


_PROPOSAL_HINT = (
    "tell the user the proposal id: a person decides at the CLI (`vouch approve ID`, "
    "`vouch reject ID --reason ...`)"
)
# each decision: what it is, and what an agent refused over a transport should do
DECISIONS = {
    "kb.approve": ("approving a proposal", _PROPOSAL_HINT),
    "kb.reject": ("rejecting a proposal", _PROPOSAL_HINT),
    "kb.promote": (
        "promoting a claim",
        "tell the user the claim id: a person decides at the CLI (`vouch promote ID`, as "
        "`vouch approve ID` for a proposal)",
    ),
    "kb.audit_anchor": (
        "anchoring the audit chain (it vouches for its history)",
        "a person runs `vouch audit anchor` at the CLI",
    ),
    "kb.migrate_apply": (
        "migrating the knowledge schema (one commit that rewrites knowledge files)",
        "a person runs `vouch migrate plan` and `vouch migrate apply` at the CLI",
    ),
    "kb.forget": (
        "purging history (it rewrites every clone's shared history)",
        "tell the user the plan: a person runs `vouch forget ID --purge-history "
        "--confirm ID` at the CLI",
    ),
    "kb.import_apply": (
        "importing a bundle",
        "an agent may check a bundle (kb.import_check); a person runs `vouch import-apply "
        "PATH` at the CLI",
    ),
}


def require_decider(ctx: CallContext, name: str) -> None:
    """Refuse (E104) unless this caller may make the decision `name` (`ctx.may_decide`);
    called before anything is read or written."""
    if ctx.may_decide:
        return
    what, server_hint = DECISIONS.get(name, ("this", _PROPOSAL_HINT))
    if ctx.transport == "cli":
        raise GateRefused(
            f"{name}: {what} is a person's decision, and this command runs as the "
            f"declared agent {ctx.cli_agent()!r}",
            hint=AGENT_DOES_NOT_DECIDE,
        )
    raise GateRefused(
        f"{name}: {what} is a person's decision, and this {ctx.transport} server was not "
        "started to allow it",
        hint=server_hint,
    )
