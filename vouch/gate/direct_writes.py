"""What a direct write may change itself: the commits vouch makes with `Vouch-Event`
and no decision (registrations, sessions, `init`, lifecycle edits, imports).

Knowledge (claims, pages, entities, relations) enters through a decision, and decision
records are written only by the decision that made them. So a registration, a session or
`init` changes no knowledge file; a lifecycle edit (`claim.promote`, `claim.supersede`,
…) changes knowledge that exists and adds none; only an import (`bundle.import`, a
person's decision to take another repository's approved knowledge with its records)
adds either. A commit typed to look like one of these — chained event, trailers and all —
that carries more is caught here, by `audit --verify`, `doctor` and `lint --since` alike.
"""

from __future__ import annotations

from vouch.gate.own_changes import added, own_changes
from vouch.gate.seals import GATED_DIRS
from vouch.kinds import GATED
from vouch.store.kb import DECIDED_DIR, KB

IMPORT = "bundle.import"
# a schema migration (`vouch.migrate.apply`): a person's decision that rewrites files,
# exactly as this vouch's steps do from its parent (recomputed: `vouch.migrate.plan`)
MIGRATE = "kb.migrate"
# `vouch forget --purge-history`: a person's rewrite of history, recorded without content
PURGE = "history.purge"
# the lifecycle verbs (`vouch.gate.lifecycle`): each edits approved knowledge in place
EDITS = frozenset(
    {"claim.cite", "claim.confirm", "claim.contradict", "claim.promote", "claim.supersede"}
    | {f"{kind}.archive" for kind in GATED}
)
# writes that register or record, never decide ("kb.import": older imports' name)
INTAKE = frozenset(
    {"kb.init", "kb.import", "source.register", "evidence.register", "session.start", "session.end"}
)
# every event vouch writes without a decision; anything else (`proposal.approve`,
# `proposal.withdraw`, a made-up name) is only ever made by a decision
EVENTS = INTAKE | EDITS | {IMPORT, MIGRATE, PURGE}


def foreign(event: str | None) -> str | None:
    """Why a commit typed as a direct write cannot carry `event`, or None when it can."""
    if event in EVENTS:
        return None
    return f"records a {event} event, which vouch never writes without a decision"


def overreach(
    kb: KB, event: str, commit: str, parents: list[str], own: dict[str, str | None] | None = None
) -> list[tuple[str, str]]:
    """(`.vouch/`-relative path, why) for each file the direct write `event` changed that
    it may not; `own`: its own changes when the caller has them."""
    if event == IMPORT:
        return []
    mine = own_changes(kb, commit, parents) if own is None else own
    if event == MIGRATE:  # exactly what this vouch's steps make from its parent
        from vouch.migrate.plan import unlike

        why = unlike(kb, commit, parents[0], mine) if len(parents) == 1 else "a merge"
        return [(rel, f"a kb.migrate write, but {why}") for rel in sorted(mine)[:1]] if why else []
    new = added(kb, parents, mine)
    out = []
    for rel in sorted(mine):
        top = rel.split("/", 1)[0]
        if top == DECIDED_DIR:
            out.append((rel, "only a decision writes a decision record"))
        elif top in GATED_DIRS and event not in EDITS:
            out.append((rel, f"a {event or 'direct'} write changes no knowledge"))
        elif top in GATED_DIRS and rel in new:
            out.append((rel, f"a {event} write edits knowledge that exists and adds none"))
    return out


def describe(commit: str, event: str, found: list[tuple[str, str]], prefix: str) -> str:
    rel, why = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (
        f"commit {commit[:12]} ({event}) changes {prefix}{rel}{more}: {why}; knowledge "
        "enters through `vouch approve`"
    )
