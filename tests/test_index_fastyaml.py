"""vouch's YAML reader never disagrees with PyYAML: it gives PyYAML's exact answer, or
gives up and PyYAML answers (more inputs in test_standins.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vouch.core import fastyaml, yamlio  # yamlio: the reference (PyYAML, libyaml)
from vouch.errors import CorruptFile
from vouch.kinds import claim, entity

TRICKY = [
    "a: b",
    'it\'s "x"',
    "line1\nline2",
    "#hash",
    "- dash",
    "x #y",
    "null",
    "~",
    "12",
    "1.5",
    "yes",
    "No",
    "0b101",
    "0x1F",
    "2025-01-01",
    "ünï",
    "tab\there",
    "back\\slash",
    "  lead",
    "trail ",
    "[list]",
    "{map}",
    "&anchor",
    "*ref",
    "!tag",
    "|",
    ">",
    "@at",
    "`tick",
    "%pct",
    "? q",
    ": c",
    "a:b",
    "a #b",
    "'quoted'",
    '"dq"',
    "x\r",
    ".5",
    "+1",
    "-1",
    "1_000",
    "1:20",
    ".inf",
    ".NaN",
    "on",
    "=",
    "<<",
    "-0b1",
    "+.5",
]


def same(a: Any, b: Any) -> bool:
    """Equal values of the same types all the way down (1 == 1.0 == True otherwise)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a == 0.0:
        return str(a) == str(b)  # -0.0 is not 0.0
    return bool(a == b)


def agrees(text: str) -> bool:
    """Whether the fast reader answered; fails the test when its answer is not PyYAML's."""
    fast = fastyaml.parse(text)
    try:
        real: Any = yamlio.load_yaml(text)
    except CorruptFile as exc:
        assert fast is None, (text, fast, exc)
        return False
    if fast is None:
        return False
    assert same(fast, real), (text, fast, real)
    return True


def test_tricky_values_agree_and_vouchs_own_files_take_the_fast_path() -> None:
    fast = 0
    for text in TRICKY:
        fast += agrees(
            claim.dump(claim.new(text=text, evidence=["a" * 64], tags=[text.strip() or "t"]))
        )
        fast += agrees(
            entity.dump(entity.new(name=text, type="concept", description=text, aliases=[text]))
        )
        fast += agrees(f"id: x\ntext: {text}\n")  # hand-written, unquoted
    assert fast >= 2 * len(TRICKY)  # what vouch writes is read without PyYAML


def test_hand_written_layouts_fall_back() -> None:
    for text in (
        "id: x\ntext: a\n  continued\n",
        "id: x  # comment\n",
        "{id: x}\n",
        "id: x\ntags: [a, b]\n",
        "---\nid: x\n",
        "id: x\nid: y\n",
        "id: &a x\n",
        "text: >\n  folded\n",
        "tags:\n- a\n",
        "a: 2026-01-01\n",
        "a: 0x1F\n",
        "a: 1.0e+5\n",
        "yes: 1\n",
        "a:\n  - \n",
    ):
        assert fastyaml.parse(text) is None, text
        agrees(text)
    assert fastyaml.parse("id: x\nsuperseded_by:\ntags:\n  - a\n") == {
        "id": "x",
        "superseded_by": None,
        "tags": ["a"],
    }


def test_load_gives_the_same_answers_and_errors_as_pyyaml() -> None:
    for text in ("a: 1\n", "a: [1, 2]\n", "- a\n", "a: b: c\n", "a: 'x\n", ""):
        try:
            expected: Any = yamlio.load_yaml(text, where="f.yaml")
        except CorruptFile as exc:
            try:
                fastyaml.load(text, where="f.yaml")
            except CorruptFile as got:
                assert got.message == exc.message
            else:
                raise AssertionError(f"{text!r} loaded") from None
        else:
            assert same(fastyaml.load(text, where="f.yaml"), expected), text


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(lambda t: bool(t.strip())))
def test_any_text_agrees_with_yaml(text: str) -> None:
    agrees(claim.dump(claim.new(text=text, evidence=["a" * 64])))
    agrees(f"id: x\ntext: {text}\n")


def test_printable_one_line_text_takes_the_fast_path() -> None:
    # the early return of the old test let a reader that declined everything pass
    texts = [
        "Deploys need a green CI run",
        "The API retries 3 times",
        "café au lait",
        "Owner: the platform team",
        "see #42",
        "50% of builds",
        "a-b_c.d/e",
    ]
    for text in texts:
        assert agrees(claim.dump(claim.new(text=text, evidence=["a" * 64]))), text
