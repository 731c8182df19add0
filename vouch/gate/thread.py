"""A proposal's review thread, read back: its revisions (the commits of its branch from
the base) and the comments on `refs/vouch/comments/<id>`, oldest first. Written by
`revise` (revisions, comments); read by `vouch show`."""

from __future__ import annotations

from typing import Any

from vouch.core import ids
from vouch.gate import records
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
        for commit, when, body in reversed(
            repo.log_records(ref, ("%H", "%cI", "%B"), max_count=MAX_COMMENTS)
        ):
            _, text, trailers = records.parse_message(body)
            comments.append(
                {
                    "comment": commit,
                    "author": (trailers.get("Vouch-Commenter") or ["?"])[0],
                    "created_at": when,
                    "revision_commit": (trailers.get("Vouch-Revision-Commit") or [""])[0],
                    "text": text,
                }
            )
    return revisions, comments
