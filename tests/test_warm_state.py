"""What a long-lived process holds (`access.open_index`'s `warm`) going wrong under it is
opened anew, as a cold command would open it: a search then answers or fails exactly as
the cold one does, and never stays broken (sixth outsider sitting: a pull request's
branch carrying another clone's index, checked out and back, left every forwarded search
failing with "Cannot operate on a closed database" while cold ones answered)."""

from __future__ import annotations

import shutil

import pytest
from index_support import claim, commit, index_dir, release_knowledge

from vouch.errors import VouchError
from vouch.index.filters import Filters
from vouch.search import access
from vouch.store.kb import KB


def test_a_foreign_index_swapped_in_and_out_leaves_nothing_broken(kb: KB, fresh: KB) -> None:
    release_knowledge(kb)
    warm: dict[str, object] = {}
    held = access.open_index(kb, warm)
    assert held.lexical("deploys", 5, Filters())

    # another clone's index in its place (a branch that commits one, checked out), then
    # a knowledge change: the held index refreshes, reloads the foreign file, and fails
    (fresh.root / "notes.md").write_text("x\n")
    claim(fresh, "Fresh clones have their own index")
    commit(fresh)
    access.open_index(fresh, {})  # builds it
    shutil.rmtree(index_dir(kb))
    shutil.copytree(index_dir(fresh), index_dir(kb))
    claim(kb, "A change the held index must take in")  # it refreshes, then reloads
    commit(kb)
    with pytest.raises(VouchError) as cold:
        access.open_index(kb, {})
    with pytest.raises(VouchError) as warmed:
        access.open_index(kb, warm)
    assert warmed.value.code == cold.value.code == "E003"  # as the cold command says

    # the index deleted (`vouch index rebuild --force`): the next search answers
    shutil.rmtree(index_dir(kb))
    again = access.open_index(kb, warm)
    assert [h.chunk_id for h in again.lexical("deploys", 5, Filters())] == [
        h.chunk_id for h in access.open_index(kb, {}).lexical("deploys", 5, Filters())
    ]


def test_a_held_index_left_half_reloaded_is_opened_anew(kb: KB) -> None:
    """A reload that failed half-way (its connection closed, the new file refused)
    leaves the held index unusable: the next search opens it anew instead of failing
    with "Cannot operate on a closed database" until the process ends."""
    release_knowledge(kb)
    warm: dict[str, object] = {}
    held = access.open_index(kb, warm)
    expected = [h.chunk_id for h in held.lexical("deploys", 5, Filters())]
    held.index.conn.close()  # what `Index._reload` leaves when `_validated` raises
    held.checked = (held.checked[0], None)  # and the check it was in failed
    again = access.open_index(kb, warm)
    assert again is not held
    assert [h.chunk_id for h in again.lexical("deploys", 5, Filters())] == expected
