"""scripts/build_model_corpus.py: the passages the bundled model is fitted to are prose
from its named sources, and never a text of the evaluation sets."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import script

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def corpus() -> Any:
    script("build_golden")
    script("build_eval_corpus")  # build_model_corpus imports both by name
    return script("build_model_corpus")


RST = """\
Sockets
=======

The :mod:`socket` module gives access to the BSD *socket* interface, and
:func:`~socket.create_connection` opens a connection for you.

.. function:: getaddrinfo(host, port)

   Translate the host and port argument into a sequence of five tuples that contain
   all the arguments needed to create a socket.

For example::

   import socket
   sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)

>>> socket.gethostname()
'example'

.. code-block:: python

   print("never prose")
"""


def test_rst_keeps_prose_and_directive_bodies_and_drops_code(corpus: Any) -> None:
    paragraphs = list(corpus.rst_paragraphs(RST))
    assert paragraphs == [
        "The socket module gives access to the BSD *socket* interface, and "
        "socket.create_connection opens a connection for you.",
        "Translate the host and port argument into a sequence of five tuples that contain "
        "all the arguments needed to create a socket.",
        "For example:",
    ]


def test_html_takes_paragraphs_outside_tables(corpus: Any) -> None:
    page = (
        "<html><body><h1>Title</h1><p>A paragraph about <b>backups</b> of a server.</p>"
        "<table><tr><td><p>a package synopsis in a table cell</p></td></tr></table>"
        '<div class="para">The handbook writes its paragraphs <div class="x">as divs'
        "</div> like this one.</div><div>not a paragraph</div></body></html>"
    )
    assert corpus.html_paragraphs(page) == [
        "A paragraph about backups of a server.",
        "The handbook writes its paragraphs as divs like this one.",
    ]


def test_dictionary_entries_are_read_through_their_index(corpus: Any, tmp_path: Path) -> None:
    data = b"spam\n  A canned meat product, also unwanted electronic mail.\n"
    data += b"eggs\n  The oval reproductive bodies laid by birds.\n"
    (tmp_path / "d.dict.dz").write_bytes(gzip.compress(data))
    from build_eval_corpus import _b64 as b64  # loaded by the fixture

    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    def enc(n: int) -> str:
        out = ""
        while True:
            out = alphabet[n % 64] + out
            n //= 64
            if not n:
                return out

    split = data.index(b"eggs")
    index = f"eggs\t{enc(split)}\t{enc(len(data) - split)}\nspam\t{enc(0)}\t{enc(split)}\n"
    (tmp_path / "d.index").write_text(index)
    assert b64(enc(split)) == split
    assert list(corpus.dict_entries(tmp_path / "d.index", tmp_path / "d.dict.dz")) == [
        "The oval reproductive bodies laid by birds.",
        "A canned meat product, also unwanted electronic mail.",
    ]


def test_merged_passages_are_bounded(corpus: Any) -> None:
    words = ["word"] * 300
    merged = list(corpus.merge([" ".join(words), "short one", "another short paragraph"]))
    assert all(len(p.split()) <= corpus.MAX_WORDS for p in merged)
    assert sum(len(p.split()) for p in merged) == 300 + 2 + 3


def test_a_passage_that_copies_an_evaluation_text_is_dropped(corpus: Any, tmp_path: Path) -> None:
    """Eight words in a row from any evaluation document keep a passage out, though the
    sources were chosen to share none."""
    with gzip.open(REPO / "examples/eval/corpus.jsonl.gz", "rt") as fh:
        evaluated = json.loads(fh.readline())["text"]
    copied = " ".join(evaluated.split()[:40])
    rst = tmp_path / "usr/share/doc/python3.11/html/_sources/library/x.rst.txt"
    rst.parent.mkdir(parents=True)
    fresh = "This paragraph was written for the test and appears in no evaluation set at all."
    rst.write_text(f"{fresh}\n\n{copied}\n")
    banned = corpus.evaluation_shingles(REPO)
    rows = list(corpus.passages(tmp_path, banned))
    assert [r["text"] for r in rows] == [fresh]
    assert [r["source"] for r in rows] == ["python3.11-doc"]


def test_the_same_passages_are_the_same_bytes_under_any_name(corpus: Any, tmp_path: Path) -> None:
    """The build records the passages file's sha256: it must not depend on --out's name
    (gzip writes the file name into its header unless told otherwise)."""
    page = tmp_path / "root/usr/share/doc/python3.11/html/_sources/library/x.rst.txt"
    page.parent.mkdir(parents=True)
    page.write_text("A paragraph of prose long enough to be kept as one training passage here.\n")
    outs = [tmp_path / "a.jsonl.gz", tmp_path / "other-name.jsonl.gz"]
    for out in outs:
        assert corpus.main(["--out", str(out), "--debs", str(tmp_path / "root")]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()
    with gzip.open(outs[0], "rt") as fh:
        assert [json.loads(line)["source"] for line in fh] == ["python3.11-doc"]
