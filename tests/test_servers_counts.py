"""The per-shard count cache behind a warm server's kb.status: fast, and never stale."""

from __future__ import annotations

import os
import time

import pytest

from vouch.core import statcache
from vouch.kinds import BY_PLURAL, KINDS
from vouch.store.kb import KB


def _add_claim_file(kb: KB, object_id: str) -> None:
    path = kb.path_of(KINDS["claim"], object_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("placeholder: counted by name only\n")


def test_counts_match_a_full_listing_through_changes(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    claims = BY_PLURAL["claims"]
    for n in range(6):
        _add_claim_file(kb, f"claim-{n}-0000000{n}")
    (kb.path_of(claims, "claim-0-00000000").parent / ".tmp-write").write_text("")
    assert kb.count(claims) == len(kb.ids(claims)) == 6

    time.sleep(statcache.RACY_NS / 1e9 + 0.05)  # let the shards age out of the racy window
    assert kb.count(claims) == 6  # counted once more, now cached

    listed: list[str] = []
    real_scandir = os.scandir

    def spy(path: str) -> object:
        listed.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(statcache.os, "scandir", spy)
    assert kb.count(claims) == 6
    assert len(listed) == 1  # only the kind directory: every shard came from the cache

    _add_claim_file(kb, "claim-6-00000006")
    _add_claim_file(kb, "claim-7-00000007")  # same tick, maybe: must still be seen
    assert kb.count(claims) == len(kb.ids(claims)) == 8
    kb.path_of(claims, "claim-1-00000001").unlink()
    assert kb.count(claims) == len(kb.ids(claims)) == 7


def test_a_fresh_kb_handle_and_a_warm_one_agree(kb_with_sources: KB) -> None:
    warm = kb_with_sources
    assert warm.status()["counts"] == KB.open(None, str(warm.dir)).status()["counts"]
    assert warm.status()["counts"]["sources"] == 3


def test_pending_count_follows_ref_changes_on_a_warm_handle(kb: KB) -> None:
    from conftest import git

    head = git(kb.root, "rev-parse", "HEAD").strip()
    prefix = "refs/heads/vouch/proposal/"
    assert kb.pending_count() == 0
    git(kb.root, "update-ref", f"{prefix}20260101-000000-aaaaaaaa", head)
    assert kb.pending_count() == 1
    time.sleep(statcache.RACY_NS / 1e9 + 0.05)
    assert kb.pending_count() == 1  # now cached
    git(kb.root, "update-ref", f"{prefix}20260101-000001-bbbbbbbb", head)
    git(kb.root, "update-ref", f"{prefix}20260101-000002-cccccccc", head)
    assert kb.pending_count() == 3
    time.sleep(statcache.RACY_NS / 1e9 + 0.05)
    assert kb.pending_count() == 3
    git(kb.root, "pack-refs", "--all")  # loose refs move into packed-refs
    assert kb.pending_count() == 3
    time.sleep(statcache.RACY_NS / 1e9 + 0.05)
    git(kb.root, "update-ref", "-d", f"{prefix}20260101-000001-bbbbbbbb")  # a packed ref
    assert kb.pending_count() == 2
    git(kb.root, "update-ref", "-d", f"{prefix}20260101-000000-aaaaaaaa")
    git(kb.root, "update-ref", "-d", f"{prefix}20260101-000002-cccccccc")
    assert kb.pending_count() == 0
