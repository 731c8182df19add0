"""Change proposals: a change to approved knowledge, proposed for a person to decide.

Knowledge enters through proposals; approved knowledge moves by lifecycle commands, which
a person runs and answers for (`vouch.gate.lifecycle`). Some changes should be decided
like new knowledge instead: the re-citation a drifted source calls for (`vouch source
refresh` opens them), a redaction, a deletion. A change proposal asks for one:

- `recite`: the claim cites a new span (a `<source>:<locator>` pointer into the current
  version), in place of the citations it names (`drop`);
- `archive`: the claim or page goes out of use;
- `redact`: the claim's words go — its text becomes a notice, its citations, tags and
  the file's comments are dropped; its id stays, so everything citing it still resolves
  (status `redacted`, `redacted_hash` the digest its id was made from);
- `delete`: the object's file goes; what names it in a list (a page's claims, a claim's
  entities) is unlinked in the same commit, and what cannot stand without it (a relation
  with it at an end, a claim it superseded) must be deleted with it (`also`).

A change proposal is one commit on `vouch/proposal/<id>` whose tree is its base's: it
carries the request in its trailers (`Vouch-Kind: change`, `Vouch-Change`, `Vouch-Object`,
`Vouch-Change-*`), never content. Approve reads the request back, checks it again on the
commit it lands on, and writes the edit itself (`change_plans`), with the decision record
and audit events, in one merge commit — so nothing a proposer put on the branch lands,
and what a reviewer pinned is the request they read. The objects a deletion unlinks or
deletes were named when it was proposed; approve refuses one that would touch more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vouch.core import ids
from vouch.errors import GateRefused
from vouch.gate.records import Proposal
from vouch.store.kb import KB

CHANGE = "change"  # the proposal kind (Vouch-Kind)
OPS = ("recite", "archive", "redact", "delete")
_LIST_SEP = ","
MAX_LISTED = 200  # objects one change may name


@dataclass(frozen=True)
class Change:
    op: str
    target: str
    evidence: str | None = None  # recite: the new citation
    drop: tuple[str, ...] = ()  # recite: the citations it replaces
    also: tuple[str, ...] = ()  # delete: objects deleted with it
    # delete: objects whose lists name it; a source's redaction: the objects it re-points
    # to evidence without the quote (recorded when proposed: approve touches no more)
    unlink: tuple[str, ...] = ()

    def trailers(self) -> dict[str, str | None]:
        return {
            "Vouch-Change": self.op,
            "Vouch-Change-Evidence": self.evidence,
            "Vouch-Change-Drop": _LIST_SEP.join(self.drop) or None,
            "Vouch-Change-Also": _LIST_SEP.join(self.also) or None,
            "Vouch-Change-Unlink": _LIST_SEP.join(self.unlink) or None,
        }

    def describe(self) -> str:
        what = {
            "recite": f"re-cite {self.target} as {self.evidence}",
            "archive": f"archive {self.target}",
            "redact": f"redact {self.target}",
            "delete": f"delete {self.target}",
        }[self.op]
        if self.drop:
            what += f" (in place of {', '.join(self.drop)})"
        if self.also:
            what += f", with {', '.join(self.also)}"
        return what

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "target": self.target,
            "evidence": self.evidence,
            "drop": list(self.drop),
            "also": list(self.also),
            "unlink": list(self.unlink),
        }


def is_change(proposal: Proposal) -> bool:
    return proposal.kind == CHANGE


def _ids(value: str, what: str, sources: bool = False) -> tuple[str, ...]:
    """The ids a list trailer names (`sources`: a source id too, as a claim cites one)."""
    items = tuple(dict.fromkeys(v.strip() for v in value.split(_LIST_SEP) if v.strip()))
    named = all(ids.is_object_id(i) or (sources and ids.is_source_id(i)) for i in items)
    if len(items) > MAX_LISTED or not named:
        raise GateRefused(
            f"its {what} trailer is not a list of object ids",
            hint="reject it, and propose the change again with vouch",
        )
    return items


def of(proposal: Proposal) -> Change:
    """The change a proposal asks for, read back from its trailers (hostile text: each
    one is checked for shape here, and for meaning on the commit it would land on)."""

    def one(key: str) -> str:
        found = proposal.trailers.get(key) or []
        if len(found) > 1:
            raise GateRefused(
                f"proposal {proposal.id} carries {key} {len(found)} times",
                hint="reject it, and propose the change again with vouch",
            )
        return found[0] if found else ""

    doubled = sorted(k for k, v in proposal.trailers.items() if len(v) > 1)
    if doubled:  # vouch writes each trailer once: a doubled one was typed by hand
        raise GateRefused(
            f"proposal {proposal.id} carries {', '.join(doubled)} more than once",
            hint="reject it, and propose the change again with vouch",
        )
    op = one("Vouch-Change")
    target = proposal.object_id
    if op not in OPS or not (ids.is_object_id(target) or ids.is_source_id(target)):
        raise GateRefused(
            f"proposal {proposal.id} does not name a change vouch makes",
            hint="its commit lacks valid Vouch-Change / Vouch-Object trailers",
        )
    evidence = one("Vouch-Change-Evidence") or None
    if (op == "recite") != (evidence is not None) or (evidence and len(evidence) > 300):
        raise GateRefused(
            f"proposal {proposal.id}: a re-citation names one new citation, nothing else does",
            hint="reject it, and propose the change again with vouch",
        )
    drop = _ids(one("Vouch-Change-Drop"), "Vouch-Change-Drop", sources=True)
    also = _ids(one("Vouch-Change-Also"), "Vouch-Change-Also")
    unlink = _ids(one("Vouch-Change-Unlink"), "Vouch-Change-Unlink")
    repoints = op == "redact" and ids.is_source_id(target)  # re-points what cites it
    listed = unlink and op != "delete" and not repoints
    if (drop and op != "recite") or (also and op != "delete") or listed:
        raise GateRefused(
            f"proposal {proposal.id} names objects its {op} does not take",
            hint="reject it, and propose the change again with vouch",
        )
    return Change(op, target, evidence, drop, also, unlink)


def deleted_by_decisions(kb: KB) -> set[str]:
    """The objects approved deletions removed: named in the `objects` of a
    `proposal.approve` event whose `change` is `delete` (the audit log as it is here)."""
    return decided(kb, "delete")


def redacted_by_decisions(kb: KB) -> set[str]:
    """The objects and sources approved redactions emptied: each one's `target` (not the
    objects it re-pointed), read as `deleted_by_decisions` reads."""
    return decided(kb, "redact", targets=True)


def decided(kb: KB, op: str, *, targets: bool = False) -> set[str]:
    """What approved changes of `op` touched: the `objects` of each `proposal.approve`
    event whose `change` is `op` (with `targets`, only the object each asked to change:
    its `target`, the first of its objects before events named it), read from the audit
    log as it is here."""
    from vouch.store import audit

    needle = f'"{op}"'.encode()
    out: set[str] = set()
    for path in audit.log_files(kb.dir):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        for line in data.split(b"\n"):
            if needle not in line:
                continue
            record = audit.parse_line(line)
            body = record.get("data") if record else None
            if not isinstance(body, dict) or body.get("change") != op:
                continue
            named = [o for o in body.get("objects") or [] if isinstance(o, str)]
            if targets:
                target = body.get("target")
                named = [target] if isinstance(target, str) else named[:1]
            out.update(named)
    return out
