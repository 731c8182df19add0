import pytest
from hypothesis import given
from hypothesis import strategies as st

from vouch.core import ids
from vouch.errors import InvalidId
from vouch.kinds import KINDS, claim, source


def test_slug_ids_are_content_addressed() -> None:
    a = claim.new(text="Deploys  need a green CI run", evidence=["a" * 64])
    b = claim.new(text="Deploys need a green CI run", evidence=["b" * 64])
    assert a["id"] == b["id"]
    assert a["id"].startswith("deploys-need-a-green-ci-run-")
    c = claim.new(text="Deploys need a red CI run", evidence=["a" * 64])
    assert c["id"] != a["id"]


def test_source_id_is_sha256_of_bytes() -> None:
    meta = source.new(b"hello\n", locator="x")
    assert meta["id"] == ids.sha256_hex(b"hello\n")
    assert meta["hash"] == "sha256:" + meta["id"]


@pytest.mark.parametrize(
    "bad",
    [
        "../etc/passwd",
        "a/b-12345678",
        "..",
        "",
        "x" * 300,
        "claims/../../x-12345678",
        "UPPER-12345678",
        "a\\b-12345678",
        "abc-1234567g",
        None,
        42,
    ],
)
def test_bad_ids_are_refused(bad) -> None:
    with pytest.raises(InvalidId):
        ids.check_id(bad)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_paths_never_escape(kind) -> None:
    k = KINDS[kind]
    with pytest.raises(InvalidId):
        (source.path_for if kind == "source" else k.path_for)("../../../../etc/passwd")


@given(st.text(max_size=200))
def test_slugify_is_always_a_safe_path_component(text: str) -> None:
    slug = ids.slugify(text)
    assert slug and "/" not in slug and ".." not in slug and len(slug) <= ids.SLUG_MAX
    assert ids.is_object_id(ids.object_id(text, {"t": text}))


@given(st.text(max_size=100))
def test_check_id_accepts_only_safe_strings(text: str) -> None:
    try:
        ids.check_id(text)
    except InvalidId:
        return
    assert "/" not in text and ".." not in text and "\\" not in text


def test_proposal_ids_made_in_one_second_sort_in_the_order_they_were_made() -> None:
    from datetime import UTC, datetime

    second = datetime(2026, 11, 26, 12, 0, 0, tzinfo=UTC)
    made = [
        ids.proposal_id({"nonce": n}, second.replace(microsecond=ms * 1000))
        for n, ms in enumerate([0, 1, 9, 10, 255, 256, 999])
    ]
    assert made == sorted(made) and len(set(made)) == len(made)
    assert all(ids.is_proposal_id(p) and p.startswith("20261126-120000-") for p in made)


def test_pending_lists_proposals_oldest_first(kb_with_sources) -> None:
    from gate_support import call, propose_claim

    made = [propose_claim(kb_with_sources, text=f"Deploys need check {n}") for n in range(4)]
    listed = [p["proposal_id"] for p in call(kb_with_sources, "kb.list_pending")]
    assert listed == made


@pytest.mark.parametrize(
    "text",
    ["abc-12345678\n", "a" * 64 + "\n", "20261126-120000-abcdef12\n", "evidence-1234abcd\n"],
)
def test_an_id_with_a_trailing_newline_is_no_id(text: str) -> None:
    """`$` in a regular expression also matches before a final newline: an id checked
    that way let `abc-12345678\\n` through, into paths, refs and references."""
    assert not (ids.is_object_id(text) or ids.is_source_id(text) or ids.is_proposal_id(text))
    with pytest.raises(InvalidId):
        ids.check_id(text)


def test_a_locator_with_a_trailing_newline_is_refused(kb_with_sources) -> None:
    from gate_support import a_source, call

    from vouch.errors import VouchError

    sid = a_source(kb_with_sources)
    for locator in ("L2\n", "#deploy-runbook\n", "T1\n"):
        made = call(
            kb_with_sources, "kb.propose_claim", {"text": "x", "evidence": [f"{sid}:{locator}"]}
        )
        assert not made["valid"] and made["proposal_id"] is None, made
    with pytest.raises(VouchError):
        call(kb_with_sources, "kb.read_claim", {"id": "deploys-need-ci-12345678\n"})
