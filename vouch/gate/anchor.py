"""Anchors: the audit chain's heads, written where no branch can rewrite them.

A local check proves that each audit event belongs to the commit that made it, but a
person with push rights can rewrite a whole unsigned history consistently: events,
records, trailers and commits. `vouch audit anchor` records the chain as it stands — its
heads, how many events lead to them, the commit and branch holding them — in an
annotated tag `vouch/audit/<n>` (signed when this clone signs). Tags are not part of
any branch: rewriting a branch leaves them as they were. Publish them
(`git push origin 'refs/tags/vouch/audit/*'`, ideally protected on the host) and CI
compares the branch with the last one (`vouch lint --since`); `vouch audit --verify`
and `vouch doctor` do too.

A later history must still hold every anchored head, unchanged, with the same events
before it. A branch that forked before the anchor is compared on what it shares: an
event of the anchored chain that it holds under the same id must be the same event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vouch.errors import GateRefused, UsageError
from vouch.gate import auditproof, settings_history, signers, trusted_keys
from vouch.gate.auditproof import Finding
from vouch.gate.records import parse_message
from vouch.store import state
from vouch.store.kb import KB

PREFIX = "refs/tags/vouch/audit/"


@dataclass(frozen=True)
class Anchor:
    ref: str
    number: int
    target: str  # the commit whose committed log was anchored
    branch: str
    heads: tuple[str, ...]
    events: int


def _parse(tag: Any) -> Anchor | None:
    number = tag.ref.removeprefix(PREFIX)
    trailers = parse_message(tag.message)[2]
    heads = tuple(h.strip() for h in trailers.get("Vouch-Audit-Head", []))
    count = (trailers.get("Vouch-Audit-Events") or [""])[0].strip()
    if not number.isdigit() or not heads or not count.isdigit():
        return None
    return Anchor(
        tag.ref,
        int(number),
        tag.target,
        (trailers.get("Vouch-Audit-Branch") or [""])[0].strip(),
        heads,
        int(count),
    )


def anchors(kb: KB) -> list[Anchor]:
    """Every anchor tag here, oldest first (tags that do not read as one are skipped)."""
    from vouch.git import trail

    found = [a for a in (_parse(t) for t in trail.tags(kb.repo, PREFIX)) if a is not None]
    return sorted(found, key=lambda a: a.number)


def unreadable(kb: KB) -> list[Finding]:
    """Tags where anchors live that do not read as one (lightweight, a malformed message,
    an odd number): they anchor nothing, which whoever published them should know."""
    read = {a.ref for a in anchors(kb)}
    refs = [row[0] for row in kb.repo.ref_records([PREFIX], ("refname",)) if row]
    return [
        Finding(
            "anchor-unreadable",
            f"{ref.removeprefix('refs/tags/')} is not an audit anchor vouch can read (make "
            "anchors with `vouch audit anchor`), so it anchors nothing",
            severity="warn",
        )
        for ref in sorted(refs)
        if ref not in read
    ]


def find(kb: KB, name: str) -> Anchor:
    """The anchor `name` names: `vouch/audit/3`, `refs/tags/vouch/audit/3` or `3`."""
    wanted = (
        name
        if name.startswith("refs/")
        else (PREFIX + name if name.isdigit() else f"refs/tags/{name}")
    )
    for a in anchors(kb):
        if a.ref == wanted:
            return a
    raise UsageError(
        f"{name!r} is not an audit anchor here",
        hint="`git tag -l 'vouch/audit/*'` lists them; fetch published ones with "
        "`git fetch origin 'refs/tags/vouch/audit/*:refs/tags/vouch/audit/*'`",
    )


def make(kb: KB, actor: str) -> dict[str, Any]:
    """Anchor the chain committed at HEAD in a new tag `vouch/audit/<n>`.

    Refused while the audit history has errors: an anchor vouches for what it records.
    """
    from vouch.git import trail

    repo = kb.repo
    head = repo.resolve("HEAD")
    if head is None:
        raise UsageError("this branch has no commits yet", hint="nothing to anchor")
    with state.write_lock(kb):
        findings, _ = auditproof.check(kb, head, policy=signers.committed_policy(kb))
        errors = [f for f in findings if f.severity == "error"]
        if errors:
            raise GateRefused(
                f"the audit history of HEAD has {len(errors)} problem(s), e.g. "
                f"{errors[0].detail[:300]}",
                hint="an anchor vouches for the history it records: fix it first "
                "(`vouch audit --verify` lists them)",
            )
        chain = auditproof.chain_at(kb, head)
        tips = chain.tips()
        if not tips:
            raise UsageError("the committed audit log is empty", hint="nothing to anchor")
        number = max((a.number for a in anchors(kb)), default=0) + 1
        branch = repo.current_branch() or ""
        lines = [
            f"vouch audit anchor {number}: {len(chain.events)} events at {head[:12]}",
            "",
            f"Vouch-Audit-Commit: {head}",
            *([f"Vouch-Audit-Branch: {branch}"] if branch else []),
            f"Vouch-Audit-Events: {len(chain.ancestry(tips))}",
            *(f"Vouch-Audit-Head: {t}" for t in tips),
            f"Vouch-Actor: {' '.join(actor.split())}",
        ]
        sign = trail.signs_tags(repo)
        trail.make_tag(
            repo,
            f"{PREFIX.removeprefix('refs/tags/')}{number}",
            head,
            "\n".join(lines) + "\n",
            sign=sign,
        )
    return {
        "ok": True,
        "tag": f"{PREFIX}{number}",
        "commit": head,
        "heads": tips,
        "events": len(chain.events),
        "signed": sign,
        "publish": f"git push origin {PREFIX}{number}",
    }


def compare(kb: KB, anchor: Anchor, rev: str, *, base: str | None = None) -> list[Finding]:
    """Findings for the chain committed at `rev` (or at `base`, for a range whose branch
    started before the anchor) against `anchor`."""
    repo = kb.repo
    name = anchor.ref.removeprefix("refs/tags/")
    if repo.store.info(anchor.target) is None:
        return [
            Finding(
                "anchor-missing",
                f"anchor {name} names commit {anchor.target[:12]}, which this clone does "
                "not have: fetch it (`git fetch origin 'refs/tags/vouch/audit/*:"
                "refs/tags/vouch/audit/*'`)",
            )
        ]
    out = _signed(kb, anchor, rev)
    holder = next((r for r in (rev, base) if r and repo.is_ancestor(anchor.target, r)), None)
    if holder is not None:
        chain = auditproof.chain_at(kb, holder)
        missing = [h for h in anchor.heads if h not in chain.events]
        if missing:
            out.append(
                Finding(
                    "anchor-broken",
                    f"the audit chain no longer holds event {missing[0][:12]}… that anchor "
                    f"{name} recorded: events were dropped or rewritten since it was anchored",
                )
            )
        elif len(chain.ancestry(anchor.heads)) != anchor.events:
            out.append(
                Finding(
                    "anchor-broken",
                    f"anchor {name} recorded {anchor.events} events up to its heads; the "
                    f"chain now has {len(chain.ancestry(anchor.heads))}: it was rewritten",
                )
            )
        return out
    anchored = auditproof.chain_at(kb, anchor.target)
    current = auditproof.chain_at(kb, rev)
    by_id = {str(e.get("id")): h for h, e in current.events.items()}
    for h, event in sorted(anchored.events.items(), key=lambda kv: str(kv[1].get("created_at"))):
        now = by_id.get(str(event.get("id")))
        if now is not None and now != h:
            changed = current.events[now]
            out.append(
                Finding(
                    "anchor-rewritten",
                    f"audit event {event.get('id')} ({event.get('event')} by "
                    f"{event.get('actor')!r}) that anchor {name} recorded now reads "
                    f"{changed.get('event')} by {changed.get('actor')!r}: history was "
                    "rewritten since it was anchored",
                )
            )
            return out
    if repo.is_ancestor(rev, anchor.target):
        out.append(
            Finding(
                "anchor-ahead",
                f"this history is behind anchor {name} (commit {anchor.target[:12]}): "
                "pull before checking it",
                severity="warn",
            )
        )
    elif base is not None or (anchor.branch and repo.current_branch() == anchor.branch):
        where = "neither BASE nor HEAD" if base is not None else anchor.branch
        out.append(
            Finding(
                "anchor-diverged",
                f"{where} holds commit {anchor.target[:12]} that anchor {name} recorded: "
                "the history was rewritten or reset since it was anchored",
            )
        )
    return out


def _signed(kb: KB, anchor: Anchor, rev: str) -> list[Finding]:
    """With signed decisions required (committed at `rev`), the anchor is signed too,
    by an allowed approver."""
    from vouch.git import trail

    required, approvers = signers.committed_policy(kb)(rev)
    if not required:
        return []
    sig = trail.tag_signature(kb.repo, anchor.ref, trusted_keys.at(kb, rev).file)
    name = anchor.ref.removeprefix("refs/tags/")
    if not sig.good:
        return [
            Finding(
                "anchor-unsigned",
                f"anchor {name} has no good signature, and review.require_signed_decisions "
                "asks for one: make anchors with signing on (tag.gpgSign)",
            )
        ]
    allowed = {x for a in approvers for x in signers.identities(a)}
    if approvers and not signers.identities(sig.signer) & allowed:
        return [
            Finding(
                "anchor-unsigned",
                f"anchor {name} is signed by {sig.signer!r}, who is not in review.approvers",
            )
        ]
    return []


def unique(findings: list[Finding]) -> list[Finding]:
    """Each finding once (two anchors may report the same rewrite), in order."""
    seen: set[tuple[str, str, str | None, str]] = set()
    out = []
    for f in findings:
        key = (f.kind, f.detail, f.commit, f.severity)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def latest(kb: KB) -> Anchor | None:
    found = anchors(kb)
    return found[-1] if found else None


def verify_history(kb: KB, head: str, anchor_name: str | None = None) -> list[Finding]:
    """`vouch audit --verify` and `vouch doctor`: the whole history of HEAD
    (`auditproof`), signatures as the configuration committed before each commit asks,
    and the chain against the last anchor (or the one named)."""
    policy = signers.committed_policy(kb)
    signing = policy(head)[0]  # none asked for: no configuration read per commit
    findings, _ = auditproof.check(kb, head, policy=policy if signing else None)
    findings += settings_history.check(kb, head)
    chosen = [find(kb, anchor_name)] if anchor_name else anchors(kb)
    for one in chosen:  # every anchor, not just the newest: a newer tag cannot hide a
        findings += compare(kb, one, head)  # rewrite of what an older one anchored
    findings += unreadable(kb)
    return unique(findings)
