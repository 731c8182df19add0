"""A range that changes the gate's own settings (`review.*` in the committed config).

`lint --since` judges a range by the settings committed on its base; this says when the
range changes them. Without signed decisions that is a warning (the pull request's diff
shows it to whoever reviews it); with them, every commit of the range that changes the
configuration must carry a good signature by an approver the base lists — otherwise a
plain commit could switch the gate off for the next range.
"""

from __future__ import annotations

from vouch.core.config import CONFIG_NAME, Config
from vouch.gate import committed, settings_history, signers, trusted_keys
from vouch.health.issues import Issue, error, warn
from vouch.store.kb import KB


def drift(
    kb: KB,
    base_settings: Config,
    head_settings: Config,
    own: dict[str, set[str]],
    base: str,
    head: str,
) -> list[Issue]:
    """A range that changes the gate's own settings: `review.*` in the configuration, or
    the allowed-signers file it names (`review.allowed_signers`). Without signed
    decisions it is a warning (the pull request's diff shows it to whoever reviews it);
    with them, every commit of the range that changes either must carry a good signature,
    judged by the base's allowed signers, by an approver the base lists, or a plain
    commit could switch the gate off or trust its own key. `own`: each commit of the
    range and the `.vouch/`-relative paths it changes itself."""
    names = {n for n in (trusted_keys.setting(base_settings), trusted_keys.setting(head_settings))}
    names.discard("")
    files = {n for n in names if not trusted_keys.path_problem(n)}
    keys_changed = any(
        committed.blob_at(kb, base, kb.rel(n)) != committed.blob_at(kb, head, kb.rel(n))
        for n in files
    )
    review_changed = head_settings.get("review") != base_settings.get("review")
    # the file the issue names is one the range changes (lint --since keeps those)
    path = kb.rel(CONFIG_NAME) if review_changed or not files else kb.rel(sorted(files)[0])
    watched = {CONFIG_NAME, *files}
    touching = [sha for sha, paths in own.items() if paths & watched]
    if touching and base_settings.get("review.require_signed_decisions") is True:
        # every commit that changes the gate on its own, even one a later commit undoes:
        # doctor and audit --verify judge each of them for good once it is merged
        changing = settings_history.changers(kb, touching, [kb.rel(n) for n in watched])
        listed = base_settings.get("review.approvers") or []
        allowed = {x for a in listed for x in signers.identities(str(a))} if listed else None
        trust = trusted_keys.at(kb, base)
        found = signers.verified(kb, changing, judged_by=lambda _: trust)
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
                    f"commit {', '.join(bad)} changes the review settings or the "
                    f"allowed signers ({path}) without a good signature by an "
                    "approver the base lists (judged by the base's allowed signers), and "
                    "the base requires signed decisions: an allowed approver makes the "
                    "change in a signed commit",
                    id=bad[0],
                )
            ]
    if not review_changed and not keys_changed:
        return []
    what = "the allowed signers" if keys_changed else "the review settings"
    return [
        warn(
            "review-settings",
            f"this range changes {what} ({path}); it was checked against "
            "the base's, and the new ones apply once it is merged",
            path=path,
        )
    ]
