"""Approving linked proposals together: the order they land in (dependencies first),
and the refusal of one that waits for a proposal outside the set."""

from __future__ import annotations

from collections.abc import Callable

from vouch.errors import GateRefused
from vouch.gate import pending, records, references
from vouch.gate.records import Proposal
from vouch.store.kb import KB


def lazy_open_objects(kb: KB) -> Callable[[], dict[str, str]]:
    found: list[dict[str, str]] = []

    def load() -> dict[str, str]:
        if not found:
            found.append(pending.open_objects(kb))
        return found[0]

    return load


def dependencies_first(kb: KB, proposals: list[Proposal]) -> list[Proposal]:
    """The proposals in the order they can land: each after those whose objects it
    refers to (otherwise in the order given). A cycle is refused."""
    by_object = {p.object_id: p for p in proposals}
    needs: dict[str, set[str]] = {}
    for p in proposals:
        obj = records.object_of(kb, p)
        refs = {i for _, i, _ in references.linked(p.kind, obj)} if obj is not None else set()
        needs[p.id] = {by_object[i].id for i in refs if i in by_object and by_object[i] != p}
    ordered: list[Proposal] = []
    placed: set[str] = set()
    while len(ordered) < len(proposals):
        ready = [p for p in proposals if p.id not in placed and needs[p.id] <= placed]
        if not ready:
            stuck = ", ".join(p.id for p in proposals if p.id not in placed)
            raise GateRefused(
                f"proposals {stuck} refer to each other in a cycle; none can land first",
                hint="reject them, and propose the content again with vouch",
            )
        ordered.append(ready[0])
        placed.add(ready[0].id)
    return ordered


def refuse_waiting(
    kb: KB, proposal: Proposal, running: str, open_objects: Callable[[], dict[str, str]]
) -> None:
    obj = records.object_of(kb, proposal)
    if obj is None:
        return  # verify names what is wrong with it
    waits = pending.waits_for(kb, proposal, obj, running, open_objects)
    if not waits:
        return
    pids = sorted(set(waits.values()))
    what = "; ".join(f"{oid} is pending in proposal {pid}" for oid, pid in waits.items())
    raise GateRefused(
        f"proposal {proposal.id} waits for {', '.join(pids)}: {what}",
        hint="approve them together (dependencies land first): vouch approve "
        + " ".join([*pids, proposal.id]),
    )
