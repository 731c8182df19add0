#!/usr/bin/env python3
"""Build the held-out evaluation corpus in examples/eval/ from text nobody on vouch wrote.

Two collections, both from Debian bookworm *main* (every package there is DFSG-free):

- `debian`: the extended descriptions of Debian packages (the archive's Translation-en
  index, fetched by `apt-get update -o Acquire::Languages=en`), one per source package,
  near-duplicates dropped, none of the packages in examples/golden/. Written by each
  package's Debian maintainer; part of the package's debian/control and distributed
  under its debian/copyright.
- `gcide`: noun entries of the GNU Collaborative International Dictionary of English
  (package dict-gcide, GPL-2+; Webster's 1913 plus later additions).

Queries (`queries.jsonl`, one `{"query", "relevant", "group", "doc", "half"}` a line):

- `synopsis`: a Debian package's one-line synopsis, which shares words with its extended
  description (keyword-like: BM25's home ground);
- `paraphrase-synopsis`: a synopsis that shares no content word (5-letter prefix,
  stopwords aside, the title included) with its document — same author, other words;
- `gloss`: the WordNet 3.0 gloss (package wordnet-base, WordNet licence) of a noun that
  has one sense in WordNet, for that noun's GCIDE entry — two dictionaries written
  independently, describing the same thing; this group keeps glosses sharing a word;
- `paraphrase-gloss`: a WordNet gloss sharing no content word with the GCIDE entry —
  a different author's description of the same thing in other words.

Every query's document, and only it, is relevant. The split is by document: a
document's `half` (`tune` or `heldout`) is fixed by its id's sha256, so every query of a
document falls in the same half and a rebuild gives the same split.

Run: python scripts/build_eval_corpus.py [--out examples/eval]
(needs `apt-get update -o Acquire::Languages=en` once; downloads dict-gcide and
wordnet-base with `apt-get download` into a temporary directory).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from build_golden import content_words  # the golden set's no-shared-word check

LISTS = Path("/var/lib/apt/lists")
TRANSLATION = "deb.debian.org_debian_dists_bookworm_main_i18n_Translation-en.lz4"
PACKAGES = "deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4"
DEBIAN_DOCS = 5200
GCIDE_DOCS = 2400
MIN_CHARS, MAX_CHARS = 250, 4000
KB_CLAIMS, KB_SOURCES = 450, 900
PER_GROUP = {"synopsis": 700, "paraphrase-synopsis": 700, "gloss": 500, "paraphrase-gloss": 700}
LICENSE = {
    "debian": "DFSG-free (Debian main); text of the package's debian/control, "
    "under its debian/copyright",
    "gcide": "GPL-2.0-or-later (GCIDE, Debian package dict-gcide 0.48.5+nmu2)",
    "wordnet": "WordNet 3.0 licence (Princeton; BSD-like, in Debian main as wordnet-base)",
}


def lz4_text(path: Path) -> str:
    return subprocess.run(["lz4cat", str(path)], capture_output=True, check=True).stdout.decode(
        "utf-8", "replace"
    )


def stable(key: str) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16)


def half_of(doc_id: str) -> str:
    return "tune" if stable("half:" + doc_id) % 2 == 0 else "heldout"


# -- Debian -------------------------------------------------------------------------------


def golden_packages(golden: Path) -> set[str]:
    try:
        rows = (golden / "LICENSES.tsv").read_text().splitlines()[1:]
    except OSError:
        return set()
    return {r.split("\t")[1] for r in rows if r.startswith("deb-")}


def debian_docs(lists: Path, exclude: set[str]) -> list[dict[str, str]]:
    sources: dict[str, str] = {}
    for para in lz4_text(lists / PACKAGES).split("\n\n"):
        pkg = re.search(r"^Package: (\S+)", para, re.M)
        src = re.search(r"^Source: (\S+)", para, re.M)
        if pkg:
            sources[pkg.group(1)] = src.group(1) if src else pkg.group(1)
    synopses: dict[str, int] = {}
    entries = []
    for para in lz4_text(lists / TRANSLATION).split("\n\n"):
        pkg = re.search(r"^Package: (\S+)$", para, re.M)
        desc = re.search(r"^Description-en: (.*)\n((?: .*(?:\n|$))*)", para, re.M)
        if not pkg or not desc:
            continue
        synopsis = " ".join(desc.group(1).split())
        synopses[synopsis.lower()] = synopses.get(synopsis.lower(), 0) + 1
        body = "\n".join("" if ln.strip() == "." else ln[1:] for ln in desc.group(2).split("\n"))
        entries.append((pkg.group(1), synopsis, re.sub(r"\n{3,}", "\n\n", body).strip()))
    seen_source: set[str] = set()
    seen_text: set[str] = set()
    out = []
    for name, synopsis, body in sorted(entries):
        source = sources.get(name, name)
        first = " ".join(body.split("\n\n")[0].lower().split())
        if (
            name in exclude
            or source in seen_source
            or first in seen_text
            or not MIN_CHARS <= len(body) <= MAX_CHARS
            or synopses[synopsis.lower()] > 1  # a shared synopsis names no one document
            or len(synopsis.split()) < 3
            or not body.isascii()
        ):
            continue
        seen_source.add(source)
        seen_text.add(first)
        out.append(
            {
                "id": f"deb-{name}",
                "collection": "debian",
                "title": name,
                "text": body,
                "query": synopsis,
                "origin": f"Debian bookworm main, package {name} (source {source})",
            }
        )
    return out


# -- GCIDE + WordNet ------------------------------------------------------------------------

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(s: str) -> int:
    n = 0
    for c in s:
        n = n * 64 + _B64.index(c)
    return n


def _drop_brackets(text: str) -> str:
    """`text` without a leading bracketed etymology (brackets nest: `[L. t['e]le]`)."""
    text = text.lstrip()
    if not text.startswith("["):
        return text
    depth = 0
    for n, ch in enumerate(text):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if depth == 0:
            return text[n + 1 :]
    return text


def clean_gcide(raw: str) -> tuple[str, str] | None:
    """(headword, definition text) of a noun entry, or None for any other entry."""
    head = re.match(r"([A-Za-z][A-Za-z-]*) \\[^\\]*\\\s*(?:\([^)]*\))?, n\.(?: ?;[^\n]*)?", raw)
    if not head:
        return None
    text = re.sub(r"^\s*\{[^}]*\}\s*(?:\([^)]*\))?\.?", "", raw[head.end() :])  # plural
    text = _drop_brackets(text)
    text = re.sub(r"^\s*\([A-Z][A-Za-z. ]*\)", "", text)  # field label like (Med.)
    kept = []
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if para.startswith(("{", "Note:", "Syn.", "--")):
            break  # phrases, usage notes and synonyms follow the definitions
        kept.append(para)
    text = "\n\n".join(kept)
    text = re.sub(
        r"\[(?:1913 Webster|Webster 1913 Suppl\.|PJC|WordNet|Obs\.|R\.|Colloq\.)[^\]]*\]", "", text
    )
    text = re.sub(r"\[[a-z^=`'\".-]{1,3}\]", "", text)  # accent codes like [e^]
    text = text.replace("{", "").replace("}", "").replace("?", "")
    text = re.sub(r"[ \t]+", " ", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    if not text.isascii() or len(text.split()) < 5:
        return None
    return head.group(1), text


class DictEntry(NamedTuple):
    """One line of a dictd index and the entry it points at."""

    head: str
    offset: int
    length: int
    text: str


def dictd_entries(index: Path, data: Path) -> Iterator[DictEntry]:
    """Every entry of a dictd dictionary, in its index's order: the index gives each
    headword's base64 offset and length in the gzip'd (dictzip) data file."""
    with gzip.open(data) as fh:
        raw = fh.read()
    for line in index.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        offset, length = _b64(parts[1]), _b64(parts[2])
        text = raw[offset : offset + length].decode("utf-8", "replace")
        yield DictEntry(parts[0], offset, length, text)


def gcide_entries(dictd: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in dictd_entries(dictd / "gcide.index", dictd / "gcide.dict.dz"):
        word = entry.head.lower()
        if not word.isalpha() or word in out:
            continue
        found = clean_gcide(entry.text)
        if found and found[0].lower() == word:
            out[word] = found[1]
    return out


def wordnet_glosses(wn: Path) -> dict[str, str]:
    """Nouns with exactly one WordNet sense: lemma -> gloss (examples dropped)."""
    single: dict[str, str] = {}
    for line in (wn / "index.noun").read_text().splitlines():
        if line.startswith(" "):
            continue
        f = line.split()
        if f[0].isalpha() and int(f[2]) == 1:
            single[f[0]] = f[-1]
    offsets = {v: k for k, v in single.items()}
    out: dict[str, str] = {}
    with (wn / "data.noun").open(encoding="utf-8") as fh:
        for line in fh:
            lemma = offsets.get(line[:8])
            if lemma is None or "|" not in line:
                continue
            gloss = line.split("|", 1)[1].strip()
            gloss = re.split(r';\s*"', gloss)[0].strip().rstrip(";").strip()
            if len(content_words(gloss)) >= 3:
                out[lemma] = gloss
    return out


def gcide_docs(dictd: Path, wn: Path) -> list[dict[str, str]]:
    entries = gcide_entries(dictd)
    glosses = wordnet_glosses(wn)
    out = []
    for word, text in sorted(entries.items()):
        if not 60 <= len(text) <= MAX_CHARS:
            continue
        out.append(
            {
                "id": f"gcide-{word}",
                "collection": "gcide",
                "title": word.capitalize(),
                "text": text,
                "query": glosses.get(word, ""),
                "origin": f"GCIDE entry {word!r}; query: WordNet 3.0 gloss of {word!r}",
            }
        )
    return out


# -- assembly -------------------------------------------------------------------------------


def document_bytes(doc: dict[str, str]) -> bytes:
    """The file a knowledge base registers for `doc` (its sha256 is the source id)."""
    return f"# {doc['title']}\n\n{doc['text']}\n".encode()


def shares_words(doc: dict[str, str]) -> bool:
    return bool(content_words(doc["query"]) & content_words(f"{doc['title']} {doc['text']}"))


def pick(docs: list[dict[str, str]], n: int, salt: str) -> list[dict[str, str]]:
    """n documents in a stable pseudo-random order: first those whose query shares no
    word with them (paraphrases are rare), then those with any query (together at most
    three quarters), then any others (distractors)."""
    ranked = sorted(docs, key=lambda d: stable(salt + d["id"]))
    chosen = [d for d in ranked if d["query"] and not shares_words(d)][: n * 3 // 8]
    ids = {d["id"] for d in chosen}
    chosen += [d for d in ranked if d["query"] and d["id"] not in ids][: n * 3 // 4 - len(chosen)]
    ids = {d["id"] for d in chosen}
    chosen += [d for d in ranked if d["id"] not in ids][: n - len(chosen)]
    return sorted(chosen, key=lambda d: d["id"])


def queries_for(docs: list[dict[str, str]]) -> list[dict[str, object]]:
    by_group: dict[str, list[dict[str, object]]] = {g: [] for g in PER_GROUP}
    for doc in sorted(docs, key=lambda d: stable("q" + d["id"])):
        if not doc["query"]:
            continue
        shared = shares_words(doc)
        base = "synopsis" if doc["collection"] == "debian" else "gloss"
        group = base if shared else f"paraphrase-{base}"
        by_group[group].append(
            {
                "query": doc["query"],
                "relevant": [hashlib.sha256(document_bytes(doc)).hexdigest()],
                "group": group,
                "doc": doc["id"],
                "half": half_of(doc["id"]),
            }
        )
    out: list[dict[str, object]] = []
    for group, rows in by_group.items():
        out += rows[: PER_GROUP[group]]
    return out


_SENTENCE = re.compile(r"(?<=[a-z0-9)][.;])\s+(?=[A-Z0-9])")


def claim_text(doc: dict[str, str]) -> str | None:
    """A claim a reviewer could approve from `doc`: its first real sentence, named."""
    body = re.sub(r"^\d+\.\s*(\([^)]*\)\s*)?", "", doc["text"])
    for sentence in _SENTENCE.split(" ".join(body.split())):
        sentence = sentence.strip()
        if sentence.lower().startswith(("this package", "this is a", "note:", "see ")):
            continue
        if len(sentence.split()) >= 5 and len(sentence) <= 300:
            return f"{doc['title']}: {sentence.rstrip(';')}"
    return None


def kb_set(docs: list[dict[str, str]], queries: list[dict[str, object]]) -> list[dict[str, object]]:
    """The knowledge-base-shaped set: KB_CLAIMS documents get an approved claim (their
    first sentence, citing them); each claim's question is its document's query and the
    claim alone is relevant. KB_SOURCES documents in all are sources (the rest are
    distractors). Groups by the words the question shares: with the claim
    (`claim-keyword`), only with the source (`claim-indirect`), with neither
    (`claim-paraphrase`)."""
    by_doc = {str(q["doc"]): q for q in queries}
    ranked = sorted(docs, key=lambda d: stable("kb" + d["id"]))
    out: list[dict[str, object]] = []
    counts = {"claim-keyword": 0, "claim-indirect": 0, "claim-paraphrase": 0}
    cap = KB_CLAIMS // 3
    claimed: set[str] = set()
    for doc in ranked:
        q = by_doc.get(doc["id"])
        claim = claim_text(doc)
        if q is None or claim is None:
            continue
        query = str(q["query"])
        if content_words(query) & content_words(claim):
            group = "claim-keyword"
        elif shares_words(doc):
            group = "claim-indirect"
        else:
            group = "claim-paraphrase"
        if counts[group] >= cap:
            continue
        counts[group] += 1
        claimed.add(doc["id"])
        out.append(
            {"doc": doc["id"], "claim": claim, "query": query, "group": group, "half": q["half"]}
        )
    distractors = [d["id"] for d in ranked if d["id"] not in claimed][: KB_SOURCES - len(claimed)]
    out += [{"doc": d, "claim": None} for d in sorted(distractors)]
    return out


def fetch_debs(tmp: Path) -> tuple[Path, Path]:
    subprocess.run(
        ["apt-get", "download", "dict-gcide", "wordnet-base"],
        cwd=tmp,
        check=True,
        capture_output=True,
    )
    for deb in tmp.glob("*.deb"):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp / "x")], check=True)
    return tmp / "x/usr/share/dictd", tmp / "x/usr/share/wordnet"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("examples/eval"))
    parser.add_argument("--golden", type=Path, default=Path("examples/golden"))
    parser.add_argument("--lists", type=Path, default=LISTS)
    parser.add_argument("--debs", type=Path, help="directory with dict-gcide/wordnet-base unpacked")
    args = parser.parse_args(argv)
    debian = debian_docs(args.lists, golden_packages(args.golden))
    with tempfile.TemporaryDirectory() as tmp:
        if args.debs:
            dictd, wn = args.debs / "usr/share/dictd", args.debs / "usr/share/wordnet"
        else:
            dictd, wn = fetch_debs(Path(tmp))
        gcide = gcide_docs(dictd, wn)
    golden_texts = {
        " ".join(p.read_text(errors="replace").split()) for p in (args.golden / "docs").glob("*.md")
    }
    docs = pick(debian, DEBIAN_DOCS, "debian") + pick(gcide, GCIDE_DOCS, "gcide")
    docs = [d for d in docs if " ".join(document_bytes(d).decode().split()) not in golden_texts]
    queries = queries_for(docs)
    args.out.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(args.out / "corpus.jsonl.gz", "wb", mtime=0) as fh:
        for doc in docs:
            row = {k: doc[k] for k in ("id", "collection", "title", "text", "origin")}
            row["license"] = LICENSE[doc["collection"]]
            row["half"] = half_of(doc["id"])
            fh.write((json.dumps(row, sort_keys=True) + "\n").encode())
    (args.out / "queries.jsonl").write_text(
        "".join(json.dumps(q, sort_keys=True) + "\n" for q in queries)
    )
    kb_rows = kb_set(docs, queries)
    (args.out / "kb.jsonl").write_text(
        "".join(json.dumps(r, sort_keys=True) + "\n" for r in kb_rows)
    )
    counts: dict[str, int] = {}
    for q in queries + [r for r in kb_rows if r.get("claim")]:
        key = f"{q['group']}/{q['half']}"
        counts[key] = counts.get(key, 0) + 1
    print(
        f"{len(docs)} documents ({len(debian)} Debian and {len(gcide)} GCIDE candidates), "
        f"{len(queries)} queries: {dict(sorted(counts.items()))}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
