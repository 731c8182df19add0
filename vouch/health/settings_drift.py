"""A range that changes the gate's own settings (`review.*` in the committed config).

`lint --since` judges a range by the settings committed on its base; this says when the
range changes them. Without signed decisions that is a warning (the pull request's diff
shows it to whoever reviews it); with them, every commit of the range that changes the
configuration must carry a good signature by an approver the base lists — otherwise a
plain commit could switch the gate off for the next range.
"""

from __future__ import annotations

from vouch.core.config import CONFIG_NAME, Config
from vouch.gate import signers
from vouch.health.issues import Issue, error, warn
from vouch.store.kb import KB


def drift(kb: KB, base_settings: Config, head_settings: Config, changing: list[str]) -> list[Issue]:
    """A range that changes the gate's own settings. Without signed decisions it is a
    warning (the pull request's diff shows it to whoever reviews it); with them, every
    commit of the range that changes the configuration must carry a good signature by
    an approver the base lists, or a plain commit could switch the gate off. `changing`:
    the range's commits that change the configuration."""
    review = head_settings.get("review")
    if review == base_settings.get("review"):
        return []
    path = kb.rel(CONFIG_NAME)
    if base_settings.get("review.require_signed_decisions") is True:
        listed = base_settings.get("review.approvers") or []
        allowed = {x for a in listed for x in signers.identities(str(a))} if listed else None
        found = signers.verified(kb, changing)
        bad = []
        for sha in changing:
            sig = found.get(sha)
            signer = signers.identities(sig.signer) if sig is not None and sig.good else set()
            if not signer or (allowed is not None and not signer & allowed):
                bad.append(sha[:12])
        if bad:
            return [
                error(
                    "review-settings",
                    f"commit {', '.join(bad)} changes the review settings in {path} "
                    "without a good signature by an approver the base lists, and the "
                    "base requires signed decisions: an allowed approver makes the "
                    "change in a signed commit",
                    path=path,
                )
            ]
    return [
        warn(
            "review-settings",
            f"this range changes the review settings in {path}; it was checked against "
            "the base's, and the new ones apply once it is merged",
            path=path,
        )
    ]
