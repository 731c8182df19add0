"""Who wrote a review comment: the git identity of its commit, never its trailer alone.

A comment is a commit on `refs/vouch/comments/<id>` anyone can write with plumbing; its
`Vouch-Commenter` trailer is typed text. Ada committed one saying `Vouch-Commenter:
Rita`, "LGTM, approving after lunch", and `show` and `why` printed "comment by Rita"
(the fifth outsider, row 15). So a comment's author is its commit's committer — as git
identifies whoever writes a vouch commit — and an agent's comment (authored under its
reserved address, committed by its operator) is the agent's, run by that operator. A
trailer naming anyone else is shown beside it, flagged, never instead of it.
"""

from __future__ import annotations

from typing import Any

from vouch.gate.identity import forms, is_agent_email


def author(people: list[str], trailer: str | None) -> dict[str, Any]:
    """A comment's `author` (a name, as the thread shows it), `author_email`, the
    `operator` of an agent's comment, and `named` — the trailer, when it names someone
    else; `people` is the commit's author name, e-mail, committer name and e-mail."""
    an, ae, cn, ce = [*people, "", "", "", ""][:4]
    if is_agent_email(ae) and (an, ae) != (cn, ce):
        name, email, operator = an, ae, f"{cn} <{ce}>"
    else:
        name, email, operator = cn, ce, None
    out: dict[str, Any] = {"author": name or "?", "author_email": email}
    if operator:
        out["operator"] = operator
    said = (trailer or "").strip()[:200]
    if said and not forms(said) & (forms(name) | forms(email)):
        out["named"] = said
        out["author"] = f"{name or '?'} (its trailer claims {said!r}: it was not written by them)"
    return out
