"""The bulk reader never disagrees with YAML: it gives the same strings, or gives up."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vouch import yamlio  # the reference parser
from vouch.errors import CorruptFile
from vouch.index import fastyaml
from vouch.kinds import claim, entity

TRICKY = ["a: b", "it's \"x\"", "line1\nline2", "#hash", "- dash", "x #y", "null", "~", "12",
          "1.5", "yes", "No", "0b101", "0x1F", "2025-01-01", "ünï", "tab\there", "back\\slash",
          "  lead", "trail ", "[list]", "{map}", "&anchor", "*ref", "!tag", "|", ">", "@at",
          "`tick", "%pct", "? q", ": c", "a:b", "a #b", "'quoted'", '"dq"', "x\r", ".5",
          "+1", "-1", "1_000", "1:20", ".inf", ".NaN", "on", "=", "<<"]


def _agrees(text: str) -> None:
    fast = fastyaml.parse(text)
    try:
        real = yamlio.load_yaml(text)
    except CorruptFile:
        real = None
    if fast is None:
        return
    if real is None:  # YAML refuses it: the fast reader must not hand out clean strings
        values = [x for v in fast.values() for x in (v if isinstance(v, list) else [v])]
        assert fastyaml.NOT_STRING in values, text
        return
    for key, value in real.items():
        got = fast.get(key)
        if isinstance(value, str):  # NOT_STRING is a cautious "ask YAML", never wrong
            assert got == value or got is fastyaml.NOT_STRING, (key, value, got)
        elif value is None:
            assert got is None, (key, got)
        elif isinstance(value, list):
            assert len(got) == len(value)
            for a, b in zip(got, value, strict=True):
                if isinstance(b, str):
                    assert a == b or a is fastyaml.NOT_STRING
                else:
                    assert not isinstance(a, str)
        else:
            assert not isinstance(got, str), (key, value, got)


def test_tricky_values_round_trip_or_fall_back() -> None:
    for text in TRICKY:
        _agrees(claim.dump(claim.new(text=text, evidence=["a" * 64], tags=[text.strip() or "t"])))
        _agrees(entity.dump(entity.new(name=text, type="concept", description=text,
                                       aliases=[text])))


def test_hand_written_layouts_fall_back() -> None:
    for text in ("id: x\ntext: a\n  continued\n", "id: x  # comment\n", "{id: x}\n",
                 "id: x\ntags: [a, b]\n", "---\nid: x\n", "id: x\nid: y\n",
                 "id: &a x\n", "text: >\n  folded\n"):
        assert fastyaml.parse(text) is None, text
    assert fastyaml.parse("id: x\nsuperseded_by:\ntags:\n  - a\n") == {
        "id": "x", "superseded_by": None, "tags": ["a"]}


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_any_text_agrees_with_yaml(text: str) -> None:
    if not text.strip():
        return
    _agrees(claim.dump(claim.new(text=text, evidence=["a" * 64])))
    _agrees(f"id: x\ntext: {text}\n")  # hand-written, unquoted
