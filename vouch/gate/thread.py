"""A proposal's review thread, read back: its revisions (the commits of its branch from
the base) and the comments on `refs/vouch/comments/<id>`, oldest first. Written by
`revise` (revisions, comments); read by `vouch show`."""

from __future__ import annotations

from typing import Any

from vouch.core import ids
from vouch.gate import commenters, records
from vouch.store.kb import KB

COMMENTS_PREFIX = "refs/vouch/comments/"
MAX_COMMENTS = 500


def thread(kb: KB, proposal: records.Proposal) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(revisions, comments) of a proposal, oldest first."""
    repo = kb.repo
    revisions: list[dict[str, Any]] = []
    if proposal.base_commit and ids.is_proposal_id(proposal.id):
        rows = repo.log_records(
            f"{proposal.base_commit}..{proposal.commit}",
            ("%H", "%cI", "%B"),
            max_count=records.MAX_REVISIONS + 1,
        )
        for commit, when, body in reversed(rows):
            found = records.from_record([f"rev/{proposal.id}", commit, when, body])
            if found is None:
                continue
            revisions.append(
                {
                    "revision": records.revision_of(found),
                    "commit": commit,
                    "object_id": found.object_id,
                    "created_at": when,
                    "rationale": found.rationale,
                }
            )
    comments: list[dict[str, Any]] = []
    ref = COMMENTS_PREFIX + proposal.id
    if repo.peek(ref):
        fields = ("%H", "%cI", *commenters.FIELDS, "%B")
        for row in reversed(repo.log_records(ref, fields, max_count=MAX_COMMENTS)):
            if len(row) < len(fields):
                continue
            commit, when, *people, body = row[: len(fields)]
            _, text, trailers = records.parse_message(body)
            comments.append(
                {
                    "comment": commit,
                    # the commit's git identity; the trailer only beside it (`commenters`)
                    **commenters.author(people, (trailers.get("Vouch-Commenter") or [""])[0]),
                    "created_at": when,
                    "revision_commit": (trailers.get("Vouch-Revision-Commit") or [""])[0],
                    "text": text,
                }
            )
    return revisions, comments


MAX_TALLIED = 10_000  # comments counted for `vouch pending` (a forged chain stays cheap)


def comment_tally(kb: KB) -> dict[str, tuple[int, str]]:
    """Proposal id -> (its review comments, the revision commit the newest one was made
    on), for every proposal with comments: what `vouch pending` flags. One for-each-ref,
    and one log only when there are comments."""
    repo = kb.repo
    tips = {
        ref.removeprefix(COMMENTS_PREFIX): revision.strip()
        for ref, revision in repo.ref_records(
            [COMMENTS_PREFIX], ("refname", "trailers:key=Vouch-Revision-Commit,valueonly")
        )
    }
    if not tips:
        return {}
    counts: dict[str, int] = {}
    for (named,) in repo.log_records(
        f"--glob={COMMENTS_PREFIX}*",
        ("%(trailers:key=Vouch-Proposal,valueonly)",),
        max_count=MAX_TALLIED,
    ):
        counts[named.strip()] = counts.get(named.strip(), 0) + 1
    return {pid: (counts.get(pid, 1), revision) for pid, revision in tips.items()}
