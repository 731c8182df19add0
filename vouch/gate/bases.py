"""Where a decision lands: the proposal's base branch, and only that.

The base is read from the proposal commit's `Vouch-Base` trailer, which whoever built the
branch wrote (DESIGN §4.1). A decision lands on it only when it is a well-formed branch
(`refs/heads/<name>`, what `git check-ref-format --branch` accepts), outside
`refs/heads/vouch/` (vouch's own proposal branches), and exists in this clone. Anything
else is refused before a byte is written — never a silent landing on the checked-out
branch instead: approve lands exactly on the base `vouch show` displayed.
"""

from __future__ import annotations

from vouch.errors import GateRefused
from vouch.gate.records import Proposal
from vouch.store.kb import KB

BRANCH_PREFIX = "refs/heads/"
VOUCH_NAMESPACE = "refs/heads/vouch/"  # proposal branches live under it
_FORBIDDEN = set(" ~^:?*[\\")
_SHOWN = 120  # characters of a hostile base named in a message


def well_formed_branch(ref: str) -> bool:
    """Whether `ref` is `refs/heads/<name>` with a name `git check-ref-format --branch`
    accepts (and printable: no control characters anywhere)."""
    if not ref.startswith(BRANCH_PREFIX) or not ref.isprintable():
        return False
    name = ref[len(BRANCH_PREFIX) :]
    if not name or name == "HEAD" or name.startswith("-") or name == "@":
        return False
    if any(c in _FORBIDDEN or ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return False
    if ".." in name or "@{" in name or name.endswith("."):
        return False
    parts = name.split("/")
    return all(p and not p.startswith(".") and not p.endswith(".lock") for p in parts)


def shown(base: str) -> str:
    text = base if base.isprintable() else repr(base)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def problem(kb: KB, proposal: Proposal) -> str | None:
    """Why the proposal's base is no branch a decision may land on here (None: it is)."""
    base = proposal.base
    if not base:
        return "names no base branch (no Vouch-Base trailer)"
    where = f"its base {shown(base)}"
    if not base.startswith(BRANCH_PREFIX):
        return f"{where} is not a branch (refs/heads/<name>)"
    if not well_formed_branch(base):
        return f"{where} is not a well-formed branch name"
    if base.lower().startswith(VOUCH_NAMESPACE):
        return f"{where} is inside {VOUCH_NAMESPACE}, where vouch keeps proposal branches"
    if kb.repo.peek(base) is None:
        return f"{where} does not exist in this clone"
    return None


def target(kb: KB, proposal: Proposal) -> tuple[str, str]:
    """The base branch to land on and its tip, or GateRefused naming the base."""
    why = problem(kb, proposal)
    tip = kb.repo.peek(proposal.base) if why is None else None
    if why is None and tip is not None:
        return proposal.base, tip
    missing = why is not None and why.endswith("does not exist in this clone")
    raise GateRefused(
        f"proposal {proposal.id} cannot be decided: {why or 'its base is gone'}; "
        "vouch lands a decision only on the proposal's own base branch",
        hint=(
            f"fetch or create {shown(proposal.base).removeprefix(BRANCH_PREFIX)} here to "
            "decide it there"
            if missing
            else "nothing was written; delete its branch "
            f"(git branch -D vouch/proposal/{proposal.id}) and propose the content "
            "again with vouch"
        ),
    )
