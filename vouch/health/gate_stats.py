"""Whether review keeps up (`vouch stats --gate`, `kb.gate_stats`; issue 38 item 5).

Read from what the repository holds: the open proposal branches (how many, how old), the
decision records under `decided/` (decisions per week, approvals and rejections, the
reasons given, the time from proposal to decision: a proposal id begins with the UTC
time it was made; ages and waits outside 0–10 years are a hand-built branch's and are
counted but not aged), and the live approved claims (how many cite evidence, how many nobody
confirmed for `review.stale_days`, how many cite lines their file no longer holds:
`health.drift`). Read-only. Decision records are committed files, so a hand-made one
counts like any other; one that cannot be read is counted as unreadable, not trusted.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from vouch.core.yamlio import load_yaml
from vouch.errors import VouchError
from vouch.health import drift
from vouch.kinds import claim as claim_kind
from vouch.store.kb import DECIDED_DIR, KB

WEEKS = 8  # decisions per week: the last this many ISO weeks
REASONS = 10  # the most frequent rejection reasons shown
RECORD_BYTES = 1 << 16  # a decision record is a few hundred bytes
APPROVED, REJECTED = "approved", "rejected"  # a record's `decision`
LONGEST = timedelta(days=3650)  # an age or a wait past this is a forged date


def gate_stats(
    kb: KB, stale_days: int | None = None, now: datetime | None = None
) -> dict[str, Any]:
    from vouch.gate.pending import open_proposals
    from vouch.health.lint import settings_of, stale_days_of

    now = now or datetime.now(UTC)
    days = stale_days_of(settings_of(kb), stale_days)
    proposals = open_proposals(kb)
    # a proposal's age from its commit's date, as `vouch pending` shows it; one dated in
    # the future or before any vouch (a hand-built branch) is counted, not aged
    ages = sorted(
        (now - made, p.id)
        for p in proposals
        if (made := _when(p.created_at)) is not None and timedelta(0) <= now - made <= LONGEST
    )
    records, unreadable = _records(kb)
    decided = [r for r in records if r["decision"] in (APPROVED, REJECTED)]
    waits = [w for r in decided if (w := _wait(r)) is not None]
    claims = [
        c
        for c in kb.iter_objects(claim_kind.KIND)
        if c.get("status") not in claim_kind.HIDDEN_STATUSES
    ]
    cutoff = now - timedelta(days=days) if days else None
    return {
        "pending": {
            "count": len(proposals),
            "median_age_days": _median([a for a, _ in ages]),
            "oldest_age_days": _days(ages[-1][0]) if ages else None,
            "oldest": ages[-1][1] if ages else None,
        },
        "decisions": {
            "total": len(decided),
            "approved": sum(1 for r in decided if r["decision"] == APPROVED),
            "rejected": sum(1 for r in decided if r["decision"] == REJECTED),
            "unreadable": unreadable,
            "per_week": _per_week(decided, now),
            "median_days_to_decision": _median(waits),
            "slowest_days_to_decision": _days(max(waits)) if waits else None,
        },
        "rejection_reasons": [
            {"reason": reason, "count": n}
            for reason, n in Counter(
                " ".join(str(r.get("reason") or "(none given)").split())[:200]
                for r in decided
                if r["decision"] == REJECTED
            ).most_common(REASONS)
        ],
        "claims": {
            "live": len(claims),
            "cited": sum(1 for c in claims if c.get("evidence")),
            "citation_coverage": round(sum(1 for c in claims if c.get("evidence")) / len(claims), 3)
            if claims
            else None,
            "unconfirmed_days": days,
            "unconfirmed": sum(1 for c in claims if cutoff and _older(c, cutoff)),
            "drifted": len({d.claim_id for d in drift.drifted(kb, claims)}),
        },
    }


def _made(proposal_id: str) -> datetime | None:
    """When a proposal was made: its id's first fifteen characters, UTC."""
    try:
        return datetime.strptime(proposal_id[:15], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def _when(stamp: object) -> datetime | None:
    if not isinstance(stamp, str | datetime):
        return None
    try:
        when = stamp if isinstance(stamp, datetime) else datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _wait(record: dict[str, Any]) -> timedelta | None:
    made, decided = _made(str(record.get("proposal_id") or "")), _when(record.get("decided_at"))
    if made is None or decided is None or not timedelta(0) <= decided - made <= LONGEST:
        return None  # an id a hand-built branch chose: not a time to decide
    return decided - made


def _older(claim: dict[str, Any], cutoff: datetime) -> bool:
    stamp = claim.get("last_confirmed_at") or claim.get("updated_at") or claim.get("created_at")
    when = _when(stamp)
    return when is not None and when < cutoff


def _median(spans: list[timedelta]) -> float | None:
    if not spans:
        return None
    return round(statistics.median(s.total_seconds() for s in spans) / 86400, 2)


def _days(span: timedelta) -> float:
    return round(span.total_seconds() / 86400, 2)


def _per_week(decided: list[dict[str, Any]], now: datetime) -> list[dict[str, Any]]:
    weeks: dict[str, Counter[str]] = {}
    for n in range(WEEKS - 1, -1, -1):
        year, week, _ = (now - timedelta(weeks=n)).isocalendar()
        weeks[f"{year}-W{week:02d}"] = Counter()
    for r in decided:
        when = _when(r.get("decided_at"))
        if when is not None:
            year, week, _ = when.isocalendar()
            found = weeks.get(f"{year}-W{week:02d}")
            if found is not None:
                found[r["decision"]] += 1
    return [{"week": w, "approved": c[APPROVED], "rejected": c[REJECTED]} for w, c in weeks.items()]


def _records(kb: KB) -> tuple[list[dict[str, Any]], int]:
    """Every decision record of the work tree (bounded reads; no link followed), and
    how many could not be read as one."""
    found: list[dict[str, Any]] = []
    unreadable = 0
    top = kb.dir / DECIDED_DIR
    for shard in _entries(str(top)):
        if not shard.is_dir(follow_symlinks=False):
            continue
        for entry in _entries(shard.path):
            if not entry.name.endswith(".yaml") or not entry.is_file(follow_symlinks=False):
                continue
            try:
                with open(entry.path, "rb") as fh:
                    data = load_yaml(fh.read(RECORD_BYTES).decode("utf-8"), where=entry.path)
            except (OSError, UnicodeDecodeError, VouchError):
                unreadable += 1
                continue
            if isinstance(data.get("decision"), str):
                found.append(data)
            else:
                unreadable += 1
    return found, unreadable


def _entries(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def markdown(d: dict[str, Any]) -> str:
    """The report as a weekly note (a pull request or wiki page)."""
    p, dec, c = d["pending"], d["decisions"], d["claims"]
    lines = ["### Review gate", ""]
    if p["count"]:
        lines.append(
            f"- **{p['count']} pending**, median age {p['median_age_days']} days, oldest "
            f"{p['oldest_age_days']} days (`{p['oldest']}`)"
        )
    else:
        lines.append("- **0 pending**")
    lines.append(
        f"- **{dec['total']} decisions**: {dec['approved']} approved, {dec['rejected']} "
        f"rejected; median {dec['median_days_to_decision']} days from proposal to decision"
    )
    lines.append(
        f"- **{c['live']} live claims**: {c['cited']} cite evidence "
        f"(coverage {c['citation_coverage']}), {c['unconfirmed']} unconfirmed for "
        f"{c['unconfirmed_days']} days, {c['drifted']} cite lines their file no longer holds"
    )
    lines += ["", "| week | approved | rejected |", "|---|---|---|"]
    lines += [f"| {w['week']} | {w['approved']} | {w['rejected']} |" for w in dec["per_week"]]
    if d["rejection_reasons"]:
        lines += ["", "Rejection reasons:", ""]
        from vouch.core.printable import md_code

        lines += [f"- {r['count']} × {md_code(r['reason'])}" for r in d["rejection_reasons"]]
    return "\n".join(lines) + "\n"


def human(d: dict[str, Any]) -> str:
    return markdown(d).replace("**", "").replace("### ", "")
