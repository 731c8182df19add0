#!/usr/bin/env python3
"""Build the training text for the bundled model's tokenlearn step (no evaluation text).

`build_default_model.py --corpus FILE` fits the static token vectors so that the mean of a
passage's token vectors predicts the teacher transformer's vector of that passage. This
script makes those passages from English prose in Debian bookworm *main* (every package
there is DFSG-free), fetched with `apt-get download`:

- `python3.11-doc` (PSF licence): the Python documentation's reStructuredText sources;
- `postgresql-doc-15` (PostgreSQL licence): the PostgreSQL manual (HTML paragraphs);
- `debian-reference-en` (GPL-2+): the Debian Reference (HTML paragraphs; its package
  tables are skipped: their cells are package synopses, the evaluation's queries);
- `debian-handbook` (GPL-2+ or CC-BY-SA-3.0): the Debian Administrator's Handbook;
- `gnome-user-docs` (CC-BY-3.0): the GNOME desktop's user help (Mallard pages);
- `python-django-doc` (BSD-3-clause): Django's documentation;
- `git-doc` (GPL-2): git's manuals and guides (AsciiDoc);
- `perl-doc` (GPL-1+ or Artistic): Perl's POD manuals;
- `fortunes` (BSD-4-clause and public domain): quotations and jokes;
- `dict-foldoc` (GFDL-1.1+), `dict-jargon` (public domain), `dict-devil` (public domain):
  the Free On-line Dictionary of Computing, the Jargon File, the Devil's Dictionary.

None of these is a source of any evaluation set (examples/eval is Debian package
descriptions, GCIDE and WordNet; examples/golden is its own): and every passage that shares
a run of eight words with an evaluation or golden document or query is dropped anyway.

Passages are paragraphs merged up to about 120 words (at least 8), deduplicated, in a fixed
order; the output is gzip'd JSON lines `{"text", "source"}` with neither a file name nor a
time in its header, so the same packages give the same bytes.

Run: python scripts/build_model_corpus.py --out FILE [--debs UNPACKED_DIR]
"""

from __future__ import annotations

import argparse
import gzip
import html
import html.parser
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from build_eval_corpus import dictd_entries

PACKAGES = (
    "python3.11-doc",
    "postgresql-doc-15",
    "debian-reference-en",
    "debian-handbook",
    "gnome-user-docs",
    "python-django-doc",
    "git-doc",
    "perl-doc",
    "fortunes",
    "dict-foldoc",
    "dict-jargon",
    "dict-devil",
)
MIN_WORDS, MAX_WORDS = 8, 120
SHINGLE = 8


def merge(paragraphs: Iterable[str]) -> Iterator[str]:
    """Consecutive paragraphs of one document joined up to MAX_WORDS words."""
    held: list[str] = []
    for para in paragraphs:
        words = para.split()
        if len(words) > MAX_WORDS:
            if held:
                yield " ".join(held)
                held = []
            for start in range(0, len(words), MAX_WORDS):
                yield " ".join(words[start : start + MAX_WORDS])
            continue
        if len(held) + len(words) > MAX_WORDS:
            yield " ".join(held)
            held = []
        held.extend(words)
    if held:
        yield " ".join(held)


def _prose(para: str) -> bool:
    """Most of the paragraph is words, not code or tables."""
    letters = sum(ch.isalpha() or ch == " " for ch in para)
    return len(para) > 0 and letters / len(para) > 0.8


# -- reStructuredText, POD, HTML ------------------------------------------------------------


_LITERAL = re.compile(
    r"\.\. (code-block|sourcecode|code|testcode|testoutput|testsetup|doctest|productionlist"
    r"|highlight|literalinclude|csv-table|list-table|table)::"
)
_NOT_PROSE = re.compile(r"\.\. |>>>|\||:[^:`\s][^:`]*:(\s|$)")  # directives, fields, examples
_ADORNMENT = set("=-~^*#+`:'\".")


def rst_paragraphs(text: str) -> Iterator[str]:
    """Prose paragraphs of reStructuredText (or AsciiDoc): directive bodies kept, literal
    blocks, examples, titles and field lists dropped."""
    literal: int | None = None  # indentation of the paragraph that opened a literal block
    for para in re.split(r"\n\s*\n", text):
        lines = [line for line in para.split("\n") if line.strip()]
        if not lines:
            continue
        indent = len(lines[0]) - len(lines[0].lstrip())
        if literal is not None and indent > literal:
            continue
        literal = None
        if para.rstrip().endswith("::") or _LITERAL.match(lines[0].strip()):
            literal = indent
        if len(lines) >= 2 and set(lines[1].strip()) <= _ADORNMENT:
            lines = lines[2:]  # a section title
        lines = [line for line in lines if not _NOT_PROSE.match(line.strip())]
        para = " ".join(" ".join(lines).split())
        para = re.sub(r":[a-z:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`", r"\1", para)  # roles
        para = re.sub(r"`([^`<]*?)(?:\s*<[^>]*>)?`_*", r"\1", para)
        para = para.replace("**", "").replace("``", "").replace("::", ":")
        if _prose(para):
            yield para


def pod_paragraphs(text: str) -> Iterator[str]:
    for para in re.split(r"\n\s*\n", text):
        if not para or para[0] in " \t=":
            continue
        para = re.sub(r"[A-Z]<+\s*([^<>]*?)\s*>+", r"\1", para)
        para = " ".join(para.split())
        if _prose(para):
            yield para


class _HtmlParagraphs(html.parser.HTMLParser):
    """Text of <p> and <div class="para"> elements that are not inside a table."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self._depth_table = 0
        self._divs: list[bool] = []  # per open <div>: is it a paragraph
        self._buf: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._depth_table += 1
        para = tag == "p" or (tag == "div" and "para" in (dict(attrs).get("class") or "").split())
        if tag == "div":
            self._divs.append(para)
        if para and not self._depth_table and self._buf is None:
            self._buf = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._depth_table = max(0, self._depth_table - 1)
        closes = tag == "p" or (tag == "div" and self._divs and self._divs.pop())
        if closes and self._buf is not None:
            para = " ".join("".join(self._buf).split())
            if _prose(para):
                self.paragraphs.append(para)
            self._buf = None

    def handle_data(self, data: str) -> None:
        if self._buf is not None:
            self._buf.append(data)


def html_paragraphs(text: str) -> list[str]:
    parser = _HtmlParagraphs()
    parser.feed(text)
    return parser.paragraphs


# -- fortunes and dictd dictionaries -------------------------------------------------------


def fortune_paragraphs(text: str) -> Iterator[str]:
    for item in text.split("\n%\n"):
        item = " ".join(item.split())
        if _prose(item):
            yield item


def dict_entries(index: Path, data: Path) -> Iterator[str]:
    """The definitions of a dictd dictionary, each entry once (headwords share entries)."""
    seen: set[tuple[int, int]] = set()
    for entry in dictd_entries(index, data):
        if entry.head.startswith("00-database") or (entry.offset, entry.length) in seen:
            continue
        seen.add((entry.offset, entry.length))
        body = entry.text.split("\n", 1)[1] if "\n" in entry.text else ""
        body = re.sub(r"\{([^}]*)\}", r"\1", body)
        body = " ".join(body.split())
        if _prose(body):
            yield body


# -- the sources -------------------------------------------------------------------------


# (package, directory under the unpacked packages, file pattern, reader, files left out):
# manuals by page, in a fixed order
PAGES: tuple[tuple[str, str, str, Callable[[str], Iterable[str]], Callable[[Path], bool]], ...] = (
    (
        "python3.11-doc",
        "usr/share/doc/python3.11/html/_sources",
        "**/*.rst.txt",
        rst_paragraphs,
        lambda p: "whatsnew" in p.parts or p.name == "changelog.rst.txt",
    ),
    (
        "postgresql-doc-15",
        "usr/share/doc/postgresql-doc-15/html",
        "*.html",
        html_paragraphs,
        lambda p: p.name.startswith("release-"),
    ),
    (
        "debian-reference-en",
        "usr/share/debian-reference",
        "**/*.en.html",
        html_paragraphs,
        lambda p: False,
    ),
    (
        "debian-handbook",
        "usr/share/doc/debian-handbook/html/en-US",
        "*.html",
        html_paragraphs,
        lambda p: False,
    ),
    ("gnome-user-docs", "usr/share/help/C", "**/*.page", html_paragraphs, lambda p: False),
    (
        "python-django-doc",
        "usr/share/doc/python-django-doc/html",
        "**/*.html",
        html_paragraphs,
        lambda p: "releases" in p.parts or p.parent.name == "_modules",
    ),
    (
        "git-doc",
        "usr/share/doc/git-doc",
        "*.txt",
        rst_paragraphs,
        lambda p: p.name.startswith("RelNotes"),
    ),
    (
        "perl-doc",
        "usr/share/perl",
        "**/*.pod",
        pod_paragraphs,
        lambda p: p.name.startswith("perl5") and "delta" in p.name,
    ),
    (
        "fortunes",
        "usr/share/games/fortunes",
        "*",
        fortune_paragraphs,
        lambda p: bool(p.suffix) or p.is_dir(),
    ),
)


def documents(root: Path) -> Iterator[tuple[str, list[str]]]:
    """(source, paragraphs) per document, in a fixed order."""
    for source, where, pattern, read, left_out in PAGES:
        for path in sorted((root / where).glob(pattern)):
            if not left_out(path):
                yield source, list(read(path.read_text(errors="replace")))
    dictd = root / "usr/share/dictd"
    for name in ("foldoc", "jargon", "devil"):
        index = dictd / f"{name}.index"
        if index.exists():
            yield f"dict-{name}", list(dict_entries(index, dictd / f"{name}.dict.dz"))


def shingles(text: str) -> set[int]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {hash(" ".join(words[i : i + SHINGLE])) for i in range(len(words) - SHINGLE + 1)}


def evaluation_shingles(repo: Path) -> set[int]:
    """Eight-word runs of every evaluation and golden document and query."""
    out: set[int] = set()
    corpus = repo / "examples/eval/corpus.jsonl.gz"
    with gzip.open(corpus, "rt") as fh:
        for line in fh:
            row = json.loads(line)
            out |= shingles(row["title"] + " " + row["text"])
    for path in (repo / "examples/eval/queries.jsonl", repo / "examples/eval/kb.jsonl"):
        for line in path.read_text().splitlines():
            out |= shingles(line)
    for path in sorted((repo / "examples/golden").rglob("*")):
        if path.is_file() and path.suffix in {".md", ".jsonl", ".yaml", ".json"}:
            out |= shingles(path.read_text(errors="replace"))
    return out


def passages(root: Path, banned: set[int]) -> Iterator[dict[str, str]]:
    seen: set[str] = set()
    for source, paragraphs in documents(root):
        for text in merge(p for p in paragraphs if not shingles(p) & banned):
            if len(text.split()) < MIN_WORDS:
                continue
            key = " ".join(text.lower().split())
            if key in seen:
                continue
            seen.add(key)
            yield {"text": html.unescape(text), "source": source}


def fetch(tmp: Path) -> Path:
    subprocess.run(["apt-get", "download", *PACKAGES], cwd=tmp, check=True, capture_output=True)
    for deb in sorted(tmp.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp / "x")], check=True)
    return tmp / "x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the .jsonl.gz to write")
    parser.add_argument("--debs", type=Path, help="a directory with the packages unpacked")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args(argv)
    banned = evaluation_shingles(args.repo)
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = args.debs if args.debs else fetch(Path(tmp))
        # no name and no time in the gzip header: the same passages are the same bytes
        # whatever --out is called (PROVENANCE records their sha256)
        with args.out.open("wb") as raw, gzip.GzipFile("", "wb", fileobj=raw, mtime=0) as fh:
            for row in passages(root, banned):
                counts[row["source"]] = counts.get(row["source"], 0) + 1
                fh.write((json.dumps(row, sort_keys=True) + "\n").encode())
    print(f"{sum(counts.values())} passages: {counts}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
