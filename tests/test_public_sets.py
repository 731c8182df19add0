"""bench/public_sets.py reads the SMART format as CISI and Cranfield write it: records and
fields, Cranfield's carriage returns, title repeat and positional query numbers, its
relevance grades, and the split by query number."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

# written for this test: the layout of CISI.ALL (multi-line title, two authors, .X)
ALL = """.I 1
.T
Shelving books by
colour
.A
Reader, A.
.A
Writer, B.
.W
   Books shelved by the colour of their
spines are found faster.
.X
1\t5\t1
.I 2
.T
Catalogue cards
.W
Cards outlive the catalogue.
"""

# the layout of cran.all.1400 and cran.qry: CRLF, zero-padded numbers, a repeated title
CRAN_ALL = "\r\n".join(
    [
        ".I 1",
        ".T",
        "wing flutter .",
        ".A",
        "smith,j.",
        ".B",
        "j. x. 1, 1958",
        ".W",
        "wing flutter .",
        "  flutter of a thin wing was measured .",
        "",
    ]
)
CRAN_QRY = "\r\n".join(
    [
        ".I 001",
        ".W",
        "what causes",
        "wing flutter .",
        ".I 004",
        ".W",
        "how do catalogue cards age .",
    ]
)


@pytest.fixture(scope="module")
def public_sets() -> ModuleType:
    spec = importlib.util.spec_from_file_location("public_sets", BENCH / "public_sets.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_records_and_fields(public_sets: ModuleType) -> None:
    records = public_sets.read_smart(ALL)
    assert [n for n, _ in records] == ["1", "2"]
    first = records[0][1]
    assert first["T"] == "Shelving books by\ncolour"
    assert first["A"] == "Reader, A.\nWriter, B."
    assert first["X"] == "1\t5\t1"
    docs = public_sets.documents(ALL)
    assert docs[0].title == "Shelving books by colour"
    assert docs[0].text == "Books shelved by the colour of their\nspines are found faster."
    body = b"Books shelved by the colour of their\nspines are found faster.\n"
    assert docs[0].bytes() == b"# Shelving books by colour\n\n" + body
    assert docs[0].id() == hashlib.sha256(docs[0].bytes()).hexdigest()


def test_cranfield_layout(public_sets: ModuleType) -> None:
    (doc,) = public_sets.documents(CRAN_ALL, drop_title_repeat=True)
    assert doc.number == "1"
    assert doc.title == "wing flutter ."
    assert doc.text == "flutter of a thin wing was measured ."
    assert public_sets.queries(CRAN_QRY) == [
        ("001", "what causes wing flutter ."),
        ("004", "how do catalogue cards age ."),
    ]


def test_relevance_grades_and_numbering(public_sets: ModuleType) -> None:
    qrels = public_sets.cranfield_qrels("1 1 2\r\n1 2 4\r\n2 2 -1\r\n2 1 3 \r\n")
    assert qrels == {"1": {"1"}, "2": {"1"}}  # grade 4 and -1 are not relevance
    assert public_sets.cisi_qrels("     1     2\t0\t0.000000\n 3 1 0 0.0\n") == {
        "1": {"2"},
        "3": {"1"},
    }
    docs = public_sets.documents(CRAN_ALL, drop_title_repeat=True)
    asked = public_sets.queries(CRAN_QRY)
    # cranqrel numbers queries by position: "2" is the query numbered 004
    s = public_sets.build_set("cran", docs, asked, {"2": {"1"}, "1": {"9"}}, by_position=True)
    assert [(q["number"], q["query"], q["half"]) for q in s.queries] == [
        ("2", "how do catalogue cards age .", "heldout")
    ]
    assert s.queries[0]["relevant"] == [docs[0].id()] and s.queries[0]["group"] == "cran"
    s = public_sets.build_set("cran", docs, asked, {"1": {"1"}}, by_position=False)
    assert [(q["number"], q["half"]) for q in s.queries] == [("1", "tune")]


def test_word_overlap(public_sets: ModuleType) -> None:
    found = public_sets.overlap(
        [("the wing flutter", ["Wing flutter measured", "a wing"]), ("catalogue", ["cards"])]
    )
    assert found.n == 2
    assert found.per_doc == pytest.approx(((1.0 + 0.5) / 2 + 0.0) / 2)
    assert found.union == pytest.approx(0.5)
    assert found.none == pytest.approx(0.5)
