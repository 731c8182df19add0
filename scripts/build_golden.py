#!/usr/bin/env python3
"""Build the retrieval golden set in examples/golden/ from text nobody on vouch wrote.

Corpus (one markdown file per document, `docs/<name>.md`):
- the long descriptions of the Python distributions installed on the build machine
  (their METADATA payload: the project's README as published on PyPI);
- the extended descriptions of installed Debian packages (/var/lib/dpkg/status).

Queries (`golden.jsonl`, one `{"query", "relevant", "group"}` a line):
- `summary`: a Python distribution's one-line `Summary:` — the author's own short
  paraphrase of the document, which the document need not repeat word for word;
- `synopsis`: a Debian package's one-line synopsis, likewise;
- `paraphrase`: hand-written questions (PARAPHRASES below) that avoid the target
  document's words, to measure the vector channel honestly. The script checks that a
  paraphrase shares no content word (by 5-letter prefix) with its document and refuses
  to build otherwise.

`relevant` holds source ids: the sha256 of the document file's bytes, which is exactly the
id `vouch source add` gives it. Only documents under a known free licence are kept;
`LICENSES.tsv` records each one's package, version, licence and origin.

Run: python scripts/build_golden.py [--out examples/golden] [--max-docs 400]
Then: vouch eval examples/golden/golden.jsonl --corpus examples/golden/docs
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
from email.message import Message
from importlib import metadata
from pathlib import Path

MAX_DOC_CHARS = 6000
MIN_DOC_CHARS = 400
DPKG_STATUS = Path("/var/lib/dpkg/status")
EXTRA_SITES = [Path("/usr/lib/python3/dist-packages")]

# licence words we accept (free licences whose text permits redistribution of the README)
_LICENSES = [
    ("apache", "Apache-2.0"),
    ("mit", "MIT"),
    ("expat", "MIT"),
    ("bsd", "BSD"),
    ("isc", "ISC"),
    ("psf", "PSF"),
    ("python software foundation", "PSF"),
    ("mozilla", "MPL-2.0"),
    ("mpl", "MPL-2.0"),
    ("lgpl", "LGPL"),
    ("lesser general", "LGPL"),
    ("gpl", "GPL"),
    ("general public", "GPL"),
    ("unlicense", "Unlicense"),
    ("cc0", "CC0-1.0"),
    ("public-domain", "public-domain"),
    ("zlib", "Zlib"),
    ("artistic", "Artistic"),
    ("hpnd", "HPND"),
]

_STOP = set(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "from",
        "as",
        "at",
        "is",
        "are",
        "be",
        "this",
        "that",
        "it",
        "its",
        "into",
        "via",
        "using",
        "use",
        "used",
        "can",
        "your",
        "you",
        "their",
        "our",
        "we",
        "not",
        "no",
        "all",
        "any",
        "more",
        "most",
        "other",
        "than",
        "then",
        "when",
        "which",
        "who",
        "how",
        "what",
        "where",
        "why",
        "will",
        "would",
        "should",
        "could",
        "may",
        "might",
        "also",
        "each",
        "such",
        "these",
        "those",
        "one",
        "two",
        "over",
        "under",
        "about",
        "after",
        "before",
        "between",
        "both",
        "but",
        "if",
        "do",
        "does",
        "so",
        "up",
        "out",
        "very",
        "just",
        "only",
        "own",
        "same",
        "too",
        "s",
        "t",
        "get",
        "make",
        "makes",
        "made",
        "set",
        "sets",
        "way",
        "ways",
        "new",
        "like",
        "well",
        "much",
        "many",
    ]
)

# Hand-written questions in everyday words, each for one document (by file stem).
PARAPHRASES: dict[str, list[str]] = {
    "py-tqdm": [
        "visual gauge of how far along a lengthy computation is",
        "indicator that fills up during a batch job",
    ],
    "py-colorama": ["coloured letters in a dos box"],
    "py-requests": ["grab a webpage from a remote site"],
    "py-pyyaml": ["load settings kept in an indented friendly markup"],
    "py-click": ["make terminal utilities with nested verbs and switches"],
    "py-pytest": ["automatically verify my routines behave"],
    "py-numpy": ["quick maths on huge matrices"],
    "py-sympy": ["solve algebra with letters rather than approximations"],
    "py-jinja2": ["produce dynamic webpages by substituting variables"],
    "py-mypy": ["find wrong argument kinds before execution"],
    "py-docker": ["launch isolated services programmatically"],
    "py-pexpect": ["drive a dialog program that asks questions"],
    "py-networkx": ["quickest route between vertices linked by edges"],
    "py-pygments": ["colourful display of programming listings"],
    "py-flask": ["tiny website backend for a hobby"],
    "py-sortedcontainers": ["keep entries in order as they arrive"],
    "py-wcwidth": ["how many slots does a glyph take in a console"],
    "py-setuptools": ["distribute my module on an index"],
    "py-pypdf": ["cut up and stitch together booklets"],
    "deb-bzip2": ["shrink big things to save room"],
    "deb-bash": ["default login environment where you type instructions"],
    "deb-cmake": ["set up builds of c++ projects"],
    "deb-apt": ["get updates for programs on a server"],
    "deb-adduser": ["new accounts on a linux machine"],
    "py-boto3": ["talk to the biggest rental computing vendor from scripts"],
    "py-jmespath": ["pick fields out of nested dictionaries with a tiny selector notation"],
    "py-hypothesis": ["throw generated samples at functions until one breaks"],
    "py-idna": ["accented glyphs in hostnames"],
    "py-markupsafe": ["stop angle brackets from sneaking into rendered pages"],
    "py-orjson": ["speedy converter from dicts to a string and back"],
    "py-pyjwt": ["signed bearer credentials for sign-in"],
    "py-rsa": ["public cipher made purely without compiled parts"],
    "py-six": ["run on both legacy and modern interpreters from one codebase"],
    "py-toml": ["an ini-like settings dialect with sections"],
    "py-xmltodict": ["turn angle-bracket markup into plain mappings"],
    "py-pluggy": ["let third parties extend my tool through extension points"],
    "py-mpmath": ["compute pi to a thousand digits"],
    "py-scipy": ["root finding, quadrature and curve fitting for researchers"],
    "py-packaging": ["decide whether release 1.10 comes after 1.9"],
    "py-ptyprocess": ["pretend to be a tty for a child program"],
}


def licence_of(meta: Message) -> str | None:
    texts = [meta.get("License-Expression") or "", (meta.get("License") or "")[:200]]
    texts += [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    blob = " ".join(texts).lower()
    for needle, name in _LICENSES:
        if needle in blob:
            return name
    return None


_BADGE = re.compile(r"^\s*(\[!\[|!\[|<img|<a |\.\. image::|\.\. \|.*\| image::|:target:|:alt:)")
_TAG = re.compile(r"<[^>]+>")


def clean_readme(text: str) -> str:
    lines = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if _BADGE.match(line):
            continue
        lines.append(_TAG.sub("", line).rstrip())
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if len(body) > MAX_DOC_CHARS:
        cut = body.rfind("\n\n", 0, MAX_DOC_CHARS)
        body = body[: cut if cut > MAX_DOC_CHARS // 2 else MAX_DOC_CHARS].rstrip()
    return body


def english_enough(text: str) -> bool:
    words = re.findall(r"[a-zA-Z]+", text.lower())
    if len(words) < 60:
        return False
    common = sum(1 for w in words if w in {"the", "and", "of", "to", "is", "a", "for", "in"})
    return common / len(words) > 0.06


def python_docs() -> list[dict[str, str]]:
    seen: set[str] = set()
    out = []
    dists = [*metadata.distributions(), *metadata.distributions(path=[str(p) for p in EXTRA_SITES])]
    for dist in sorted(dists, key=lambda d: (d.metadata["Name"] or "").lower()):
        meta = dist.metadata
        name = (meta["Name"] or "").strip()
        key = re.sub(r"[-_.]+", "-", name.lower())
        summary = " ".join((meta.get("Summary") or "").split())
        if not name or key in seen or not summary or summary.upper() == "UNKNOWN":
            continue
        licence = licence_of(meta)
        body = clean_readme(meta.get_payload() or meta.get("Description") or "")
        if licence is None or len(body) < MIN_DOC_CHARS or not english_enough(body):
            continue
        seen.add(key)
        out.append(
            {
                "stem": f"py-{key}",
                "title": name,
                "text": body,
                "query": summary,
                "group": "summary",
                "package": name,
                "version": meta["Version"] or "",
                "license": licence,
                "origin": "PyPI package metadata (installed)",
            }
        )
    return out


def debian_licence(package: str) -> str | None:
    path = Path("/usr/share/doc") / package / "copyright"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = re.search(r"^License:\s*(\S+)", text, re.M)
    if not found:
        return None
    blob = found.group(1).lower()
    for needle, _name in _LICENSES:
        if needle in blob:
            return found.group(1)
    return None


def debian_docs() -> list[dict[str, str]]:
    try:
        status = DPKG_STATUS.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    by_text: dict[str, dict[str, str]] = {}
    synopses: dict[str, int] = {}
    for para in status.split("\n\n"):
        pkg = re.search(r"^Package: (\S+)$", para, re.M)
        ver = re.search(r"^Version: (\S+)$", para, re.M)
        desc = re.search(r"^Description: (.*)\n((?: .*(?:\n|$))*)", para, re.M)
        if not pkg or not desc:
            continue
        synopsis = " ".join(desc.group(1).split())
        long = "\n".join("" if ln.strip() == "." else ln[1:] for ln in desc.group(2).split("\n"))
        long = re.sub(r"\n{3,}", "\n\n", long).strip()
        synopses[synopsis.lower()] = synopses.get(synopsis.lower(), 0) + 1
        key = " ".join(long.lower().split())
        licence = debian_licence(pkg.group(1))
        if len(long) < 300 or licence is None or key in by_text:
            continue
        by_text[key] = {
            "stem": f"deb-{pkg.group(1)}",
            "title": pkg.group(1),
            "text": long,
            "query": synopsis,
            "group": "synopsis",
            "package": pkg.group(1),
            "version": ver.group(1) if ver else "",
            "license": licence,
            "origin": "Debian package description (installed)",
        }
    # a synopsis shared by several packages names no single relevant document
    return [d for d in by_text.values() if synopses[d["query"].lower()] == 1]


def content_words(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 2}


def write(out: Path, docs: list[dict[str, str]]) -> None:
    shutil.rmtree(out / "docs", ignore_errors=True)  # README.md beside it is hand-written
    (out / "docs").mkdir(parents=True)
    golden, licences = [], ["file\tpackage\tversion\tlicense\torigin"]
    ids: dict[str, str] = {}
    for doc in docs:
        data = f"# {doc['title']}\n\n{doc['text']}\n".encode()
        name = f"{doc['stem']}.md"
        (out / "docs" / name).write_bytes(data)
        ids[doc["stem"]] = hashlib.sha256(data).hexdigest()
        golden.append(
            {
                "query": doc["query"],
                "relevant": [ids[doc["stem"]]],
                "group": doc["group"],
                "doc": name,
            }
        )
        licences.append(
            "\t".join([name, doc["package"], doc["version"], doc["license"], doc["origin"]])
        )
    texts = {d["stem"]: f"{d['title']} {d['text']}" for d in docs}
    problems = []
    for stem, questions in PARAPHRASES.items():
        if stem not in ids:
            problems.append(f"paraphrase target {stem} is not in the corpus")
            continue
        for question in questions:
            shared = content_words(question) & content_words(texts[stem])
            if shared:
                problems.append(f"{stem}: {question!r} shares {sorted(shared)}")
            golden.append(
                {
                    "query": question,
                    "relevant": [ids[stem]],
                    "group": "paraphrase",
                    "doc": f"{stem}.md",
                }
            )
    if problems:
        raise SystemExit("paraphrase check failed:\n  " + "\n  ".join(problems))
    (out / "golden.jsonl").write_text("".join(json.dumps(g) + "\n" for g in golden))
    (out / "LICENSES.tsv").write_text("\n".join(licences) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("examples/golden"))
    parser.add_argument("--max-docs", type=int, default=400)
    args = parser.parse_args(argv)
    py, deb = python_docs(), debian_docs()
    keep_py = py[: args.max_docs]
    deb_room = max(0, args.max_docs - len(keep_py))
    # spread the Debian picks over the alphabet rather than taking the first names
    step = max(1, len(deb) // deb_room) if deb_room else len(deb) + 1
    docs = keep_py + deb[::step][:deb_room]
    write(args.out, docs)
    size = sum(p.stat().st_size for p in (args.out / "docs").iterdir())
    print(
        f"{len(docs)} documents ({len(keep_py)} Python, {len(docs) - len(keep_py)} Debian), "
        f"{size / 1e6:.2f} MB -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
