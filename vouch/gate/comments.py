"""A proposal's review comments, read back bounded from `refs/vouch/comments/<id>`.

`vouch comment` writes each comment as a commit with the empty tree whose parent is the
previous comment, and whose trailers name the proposal (`revise.comment`). Anyone may
point that ref anywhere, so the walk follows first parents from the tip and keeps only
commits that are comments on this proposal (their `Vouch-Proposal` trailer), stopping
at the first that is not: a ref pointed at a commit whose parent is `master` listed
every master commit as "comment by ?" (fourth outsider, row 16).

A comment is read through `ObjectStore.read_ends`: its first `MAX_COMMENT_BYTES` (what
is shown) and its last `_TAIL_BYTES` (its trailers), whatever its size; a 20 MB comment
was printed whole on the review screen (row 17). A comment cut short says how many bytes
were left out and how to read them (`git show -s --format=%B COMMIT`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from vouch.gate import commenters, records
from vouch.store.kb import KB

MAX_COMMENT_BYTES = 16 << 10  # of one comment's message read and shown
_TAIL_BYTES = 4 << 10  # the end of a longer one, where its trailers are


def read(kb: KB, ref: str, proposal_id: str, limit: int) -> list[dict[str, Any]]:
    """The comments on `ref`, oldest first: at most `limit`, each the proposal's."""
    store = kb.repo.store
    found: list[dict[str, Any]] = []
    commit = kb.repo.peek(ref)
    while commit and len(found) < limit:
        ends = store.read_ends(commit, MAX_COMMENT_BYTES, _TAIL_BYTES)
        if ends is None or ends[0] != "commit":
            break
        comment, parent = _comment(commit, ends[1], ends[2], ends[3], proposal_id)
        if comment is None:
            break  # not a comment on this proposal: the thread ends here
        found.append(comment)
        commit = parent
    return found[::-1]


def _comment(
    commit: str, head: bytes, tail: bytes, size: int, proposal_id: str
) -> tuple[dict[str, Any] | None, str | None]:
    """(the comment `commit` holds, its parent), or (None, None) when it is none."""
    end = head.find(b"\n\n")
    if end < 0:
        return None, None  # headers longer than vouch writes
    headers = head[:end].decode("utf-8", "replace").split("\n")
    parents = [h[7:] for h in headers if h.startswith("parent ")]
    committed = [h[10:] for h in headers if h.startswith("committer ")]
    authored = [h[7:] for h in headers if h.startswith("author ")]
    if len(parents) > 1 or len(committed) != 1:
        return None, None
    whole = size <= len(head)
    message = head[end + 2 :].decode("utf-8", "replace" if whole else "ignore")
    _, text, trailers = records.parse_message(message)
    if not whole:
        last = tail.rsplit(b"\n\n", 1)
        if len(last) < 2:
            return None, None  # its trailers cannot be read within the bound
        trailers = records.parse_message("x\n\n" + last[1].decode("utf-8", "replace"))[2]
    if (trailers.get("Vouch-Proposal") or [""])[0] != proposal_id:
        return None, None
    people = [*_person(authored[0] if authored else ""), *_person(committed[0])]
    comment: dict[str, Any] = {
        "comment": commit,
        # the commit's git identity; the trailer only beside it (`commenters`)
        **commenters.author(people, (trailers.get("Vouch-Commenter") or [""])[0]),
        "created_at": _when(committed[0]),
        "revision_commit": (trailers.get("Vouch-Revision-Commit") or [""])[0],
        "text": text,
    }
    if not whole:
        comment["cut"] = {
            "more_bytes": size - len(head),
            "read_with": f"git show -s --format=%B {commit}",
        }
    return comment, parents[0] if parents else None


def _person(line: str) -> tuple[str, str]:
    """(name, e-mail) of an author or committer line (`Name <mail> 1700000000 +0100`)."""
    name, _, rest = line.partition(" <")
    return name.strip(), rest.partition(">")[0].strip()


def _when(committer: str) -> str:
    """`%cI` of a committer line (`Name <mail> 1700000000 +0100`)."""
    try:
        stamp, zone = committer.rsplit(" ", 2)[1:]
        sign = -1 if zone.startswith("-") else 1
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5])) * sign
        return datetime.fromtimestamp(int(stamp), timezone(offset)).isoformat()
    except (ValueError, OverflowError, OSError):
        return datetime.fromtimestamp(0, UTC).isoformat()
