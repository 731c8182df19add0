#!/usr/bin/env python3
"""Public test collections as evaluation sets (issue 35): CISI and Cranfield.

Two classic IR collections whose queries were written by people other than the
documents' authors (CISI: library-science questions, about half of them the abstract of
a paper standing for a need; Cranfield: aerodynamics researchers' questions), judged by
hand. Unlike the project's own
"paraphrase" groups, their queries share some words with the documents the way real
queries do. They are read where they lie (a clone of a public repository, in git's own
object store or a work tree) and never copied into the project: this script writes each
set under bench/out/public/ (gitignored) in the format `bench/tune_search.py --set` takes,
at two sizes — the collection alone, and the collection mixed into the project's own
examples/eval corpus (7,600 distractor documents) — and prints the `--set` arguments.

Getting the data (the commits the figures in bench/RESULTS.md were measured at):

    git clone https://github.com/Shakiba-Alipour/Information-Retrieval-on-CISI   # 7a23c34
    git clone https://github.com/noramtboraas/information-retrieval             # 4ea1b8e

The files are the SMART-format originals (CISI.ALL/.QRY/.REL; cran.all.1400, cran.qry,
cranqrel), distributed for research by the University of Glasgow's IR group; the
repositories carry no licence of their own, so the project ships none of their text.

- Documents are `# <title>\\n\\n<abstract>\\n` (`.T` and `.W`; authors, bibliography and
  cross-references left out; Cranfield's abstract, which repeats the title, without the
  repeat). A document's id is the sha256 of those bytes, as for examples/eval.
- Queries are the `.W` text. CISI's relevance file lists 76 of its 112 queries; the
  others have no judgments and are left out. Cranfield's relevance file numbers queries
  by position in cran.qry (1-225), not by their `.I` number, and grades documents 1
  (a complete answer) to 4 (minimum interest), plus one -1 line a query (not a
  relevance grade): grades 1-3
  count as relevant (`CRANFIELD_GRADES`), so 3 queries with only grade-4 documents drop.
- `half` is `tune` for an odd query number, `heldout` for an even one; `group` is the
  set's name.

It also prints each set's query-document word overlap beside the project's own sets
(golden, eval, kb): the mean share of a query's content words (lowercase, the lexical
query's stopwords out) found in a relevant document, per relevant document and in the
union of them, and the share of queries with no content word in any relevant document.

    python bench/public_sets.py [--cisi DIR] [--cranfield DIR] [--out bench/out/public]

Without the data it says so and exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import evalsets as es

from vouch.search.weighting import QUERY_STOPWORDS, content_stems

MIRROR = Path("/work/.mirror")
CISI = MIRROR / "Shakiba-Alipour+Information-Retrieval-on-CISI" / "repo"
CRANFIELD = MIRROR / "noramtboraas+information-retrieval" / "repo"
CRANFIELD_GRADES = (1, 2, 3)  # cranqrel: 1 complete answer … 4 minimum interest; -1 a note
_FIELD = re.compile(r"^\.([A-Z])(?:\s+(.*?))?\s*$")
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Document:
    number: str
    title: str
    text: str

    def bytes(self) -> bytes:
        return es.document_bytes(self.title, self.text)

    def id(self) -> str:
        return hashlib.sha256(self.bytes()).hexdigest()


# -- the SMART format --------------------------------------------------------------------------


def read_smart(text: str) -> list[tuple[str, dict[str, str]]]:
    """`.I <n>` records in file order: (n, {field letter: its lines}). A field is a line
    `.T`, `.A`, `.W`, … on its own; its text runs to the next field line."""
    records: list[tuple[str, dict[str, str]]] = []
    field = ""
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        mark = _FIELD.match(line)
        if mark and mark.group(1) == "I":
            records.append(((mark.group(2) or "").strip(), {}))
            field = ""
        elif mark and records:
            field = mark.group(1)
            fields = records[-1][1]
            # a repeated field (CISI's multi-author .A) continues the first
            fields[field] = fields.get(field, "") + (mark.group(2) or "")
        elif records and field:
            fields = records[-1][1]
            fields[field] = f"{fields[field]}\n{line}" if fields[field] else line
    return [(n, {k: v.strip() for k, v in f.items()}) for n, f in records]


def _oneline(text: str) -> str:
    return " ".join(text.split())


def documents(text: str, drop_title_repeat: bool = False) -> list[Document]:
    """The documents of a `.ALL` file. `drop_title_repeat`: Cranfield's abstract opens
    with the title again; without it the title's words would count twice."""
    out = []
    for number, fields in read_smart(text):
        title = _oneline(fields.get("T", ""))
        body = fields.get("W", "")
        if drop_title_repeat and title and _oneline(body).startswith(title):
            body = _strip_words(body, len(title.split()))
        lines = [" ".join(line.split()) for line in body.split("\n")]
        out.append(Document(number, title, "\n".join(x for x in lines if x)))
    return out


def _strip_words(text: str, n: int) -> str:
    """`text` without its first `n` words (line breaks after them kept)."""
    words = list(re.finditer(r"\S+", text))
    return text[words[n - 1].end() :].strip() if len(words) >= n else ""


def queries(text: str) -> list[tuple[str, str]]:
    """(number, text) of a `.QRY` file's queries, in file order."""
    return [(n, _oneline(f.get("W", ""))) for n, f in read_smart(text)]


def cisi_qrels(text: str) -> dict[str, set[str]]:
    """CISI.REL: `query document 0 0.0` a line, every pair relevant."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            out.setdefault(str(int(parts[0])), set()).add(str(int(parts[1])))
    return out


def cranfield_qrels(text: str, grades: Sequence[int] = CRANFIELD_GRADES) -> dict[str, set[str]]:
    """cranqrel: `query document grade` a line, the query numbered by its position in
    cran.qry; a pair is relevant when its grade is one of `grades`."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and int(parts[2]) in grades:
            out.setdefault(str(int(parts[0])), set()).add(str(int(parts[1])))
    return out


# -- the sets ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicSet:
    name: str
    docs: list[Document]
    queries: list[dict[str, Any]]  # {"query", "relevant", "group", "half", "number"}


def build_set(
    name: str,
    docs: list[Document],
    asked: list[tuple[str, str]],
    qrels: dict[str, set[str]],
    by_position: bool,
) -> PublicSet:
    """Queries with at least one relevant document that exists, relevant ids as sha256.
    `by_position`: the relevance file numbers queries 1.. in file order (Cranfield)."""
    ids = {str(int(d.number)): d.id() for d in docs}
    rows: list[dict[str, Any]] = []
    for position, (number, text) in enumerate(asked, 1):
        key = str(position) if by_position else str(int(number))
        relevant = sorted({ids[d] for d in qrels.get(key, ()) if d in ids})
        if not relevant or not text:
            continue
        half = "tune" if int(key) % 2 else "heldout"
        rows.append(
            {"query": text, "relevant": relevant, "group": name, "half": half, "number": key}
        )
    return PublicSet(name, docs, rows)


def read_git_or_tree(repo: Path, name: str) -> str:
    """A file of a clone: from its work tree if it has one, else from HEAD."""
    if (repo / name).is_file():
        return (repo / name).read_text(encoding="latin-1")
    got = subprocess.run(
        ["git", "-C", str(repo), "show", f"HEAD:{name}"], capture_output=True, check=True
    )
    return got.stdout.decode("latin-1")


def head_commit(repo: Path) -> str:
    got = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True)
    return got.stdout.decode().strip() or "unknown"


def cisi(repo: Path) -> PublicSet:
    docs = documents(read_git_or_tree(repo, "CISI.ALL"))
    asked = queries(read_git_or_tree(repo, "CISI.QRY"))
    return build_set("cisi", docs, asked, cisi_qrels(read_git_or_tree(repo, "CISI.REL")), False)


def cranfield(repo: Path) -> PublicSet:
    docs = documents(read_git_or_tree(repo, "cran.all.1400"), drop_title_repeat=True)
    asked = queries(read_git_or_tree(repo, "cran.qry"))
    qrels = cranfield_qrels(read_git_or_tree(repo, "cranqrel"))
    return build_set("cranfield", docs, asked, qrels, True)


def write_docs(s: PublicSet, out: Path, distractors: Iterable[dict[str, str]] = ()) -> Path:
    """The set's documents (and `distractors`, examples/eval documents) as files in
    `out/docs`, rewritten only when they changed."""
    files = {f"{s.name}-{int(d.number):05d}.md": d.bytes() for d in s.docs}
    files.update(
        {f"eval-{d['id']}.md": es.document_bytes(d["title"], d["text"]) for d in distractors}
    )
    docs_dir = out / "docs"
    stamp = hashlib.sha256(json.dumps(sorted((k, v.hex()) for k, v in files.items())).encode())
    marker = out / ".written"
    if not (marker.is_file() and marker.read_text() == stamp.hexdigest()):
        shutil.rmtree(docs_dir, ignore_errors=True)
        docs_dir.mkdir(parents=True)
        for name, data in files.items():
            (docs_dir / name).write_bytes(data)
        marker.write_text(stamp.hexdigest())
    return docs_dir


def write_queries(s: PublicSet, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(q, sort_keys=True) + "\n" for q in s.queries))
    return path


# -- word overlap ------------------------------------------------------------------------------


def content_words(text: str) -> set[str]:
    """Lowercase words of two letters or more, the lexical query's stopwords out."""
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in QUERY_STOPWORDS}


@dataclass(frozen=True)
class Overlap:
    n: int
    words: float  # mean content words per query
    per_doc: float  # mean share of a query's words in a relevant document
    union: float  # … in the union of its relevant documents
    stems: float  # per_doc on 5-letter stems (the project's "shares no word" check)
    none: float  # share of queries with no content word in any relevant document


def overlap(pairs: Iterable[tuple[str, Sequence[str]]]) -> Overlap:
    """`pairs`: (query, its relevant documents' texts)."""
    rows = []
    for query, texts in pairs:
        wanted = content_words(query)
        stems = set(content_stems(query))
        if not wanted or not texts:
            continue
        have = [content_words(t) for t in texts]
        have_stems = [set(content_stems(t)) for t in texts]
        union = set().union(*have)
        rows.append(
            (
                len(wanted),
                sum(len(wanted & h) for h in have) / len(have) / len(wanted),
                len(wanted & union) / len(wanted),
                sum(len(stems & h) for h in have_stems) / len(have_stems) / max(1, len(stems)),
                not wanted & union,
            )
        )
    n = len(rows)
    if not n:
        return Overlap(0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return Overlap(n, *(sum(float(r[i]) for r in rows) / n for i in range(5)))


def _grouped(
    rows: Iterable[tuple[str, str, Sequence[str]]],
) -> dict[str, list[tuple[str, Sequence[str]]]]:
    out: dict[str, list[tuple[str, Sequence[str]]]] = {}
    for group, query, texts in rows:
        out.setdefault(group, []).append((query, texts))
    return out


def project_overlaps() -> dict[str, Overlap]:
    """The project's own sets, by group: golden (examples/golden), eval and kb."""
    root = es.ROOT
    out: dict[str, Overlap] = {}
    golden_docs = {
        hashlib.sha256(p.read_bytes()).hexdigest(): p.read_text()
        for p in (root / "examples/golden/docs").iterdir()
    }
    golden = [
        json.loads(x) for x in (root / "examples/golden/golden.jsonl").read_text().split("\n") if x
    ]
    for g, pairs in _grouped(
        (r["group"], r["query"], [golden_docs[i] for i in r["relevant"]]) for r in golden
    ).items():
        out[f"golden/{g}"] = overlap(pairs)
    docs = es.eval_docs()
    eval_texts = {
        hashlib.sha256(es.document_bytes(d["title"], d["text"])).hexdigest(): es.document_bytes(
            d["title"], d["text"]
        ).decode()
        for d in docs
    }
    asked = [
        json.loads(x) for x in (root / "examples/eval/queries.jsonl").read_text().split("\n") if x
    ]
    for g, pairs in _grouped(
        (r["group"], r["query"], [eval_texts[i] for i in r["relevant"]]) for r in asked
    ).items():
        out[f"eval/{g}"] = overlap(pairs)
    kb = [json.loads(x) for x in (root / "examples/eval/kb.jsonl").read_text().split("\n") if x]
    for g, pairs in _grouped(
        (r["group"], r["query"], [r["claim"]]) for r in kb if r.get("query")
    ).items():
        out[f"kb/{g}"] = overlap(pairs)
    return out


def set_overlap(s: PublicSet) -> Overlap:
    texts = {d.id(): d.bytes().decode() for d in s.docs}
    return overlap((q["query"], [texts[i] for i in q["relevant"]]) for q in s.queries)


def render_overlaps(found: dict[str, Overlap]) -> str:
    lines = [
        "| set/group | queries | content words / query | overlap per relevant doc "
        "| in union of relevant | 5-letter stems per doc | queries with none |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, o in found.items():
        lines.append(
            f"| {name} | {o.n} | {o.words:.1f} | {o.per_doc:.2f} | {o.union:.2f} "
            f"| {o.stems:.2f} | {o.none:.0%} |"
        )
    return "\n".join(lines) + "\n"


def _shown(path: Path) -> Path:
    """`path` relative to the working directory when under it (a shorter command)."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


# -- main --------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cisi", type=Path, default=CISI, help="a clone of the CISI repository")
    parser.add_argument(
        "--cranfield", type=Path, default=CRANFIELD, help="a clone of the Cranfield one"
    )
    parser.add_argument("--out", type=Path, default=es.OUT / "public")
    args = parser.parse_args(argv)
    readers = {"cisi": (args.cisi, cisi), "cranfield": (args.cranfield, cranfield)}
    found = []
    for name, (repo, read) in readers.items():
        if not repo.is_dir():
            print(f"{name}: no clone at {repo}: skipped (it is never part of the project)")
            continue
        s = read(repo)
        print(
            f"{name}: {len(s.docs)} documents, {len(s.queries)} judged queries "
            f"({sum(q['half'] == 'tune' for q in s.queries)} tune), {repo} at {head_commit(repo)}",
            file=sys.stderr,
        )
        found.append(s)
    if not found:
        return 0
    distractors = es.eval_docs()
    specs = []
    for s in found:
        asked = _shown(write_queries(s, args.out / s.name / "queries.jsonl"))
        small = _shown(write_docs(s, args.out / s.name))
        large = _shown(write_docs(s, args.out / f"{s.name}-large", distractors))
        specs += [f"--set {s.name}={asked}:{small}", f"--set {s.name}-large={asked}:{large}"]
    overlaps = {s.name: set_overlap(s) for s in found} | project_overlaps()
    print(render_overlaps(overlaps))
    print("python bench/tune_search.py --sets '' " + " ".join(specs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
