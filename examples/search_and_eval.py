#!/usr/bin/env python3
"""Search modes, filters and `vouch eval`, on twelve package descriptions from the
golden set (examples/golden/): Debian packages tagged `debian`, Python ones `python`.

A default search is hybrid: BM25 words and embedding vectors, fused. --fts-only finds
words, --vec-only meaning; filters narrow any of them. `vouch eval` measures how well
each mode finds what a set of questions should find.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from _helpers import Scratch, check, run, say

GOLDEN = Path(__file__).resolve().parent / "golden"
DEBIAN = ["adduser", "apt", "bash", "bzip2", "cmake"]
PYTHON = ["boto3", "click", "colorama", "docker", "flask", "hypothesis", "idna"]


def top(s: Scratch, kb: Path, *args: str) -> list[str]:
    """The documents a search finds, best first (a file name: `deb-bash.md`)."""
    response = s.vouch_json("search", *args, "--top", "3", cwd=kb)
    return [hit["source"]["title"] for hit in response["results"]]


def main(s: Scratch) -> None:
    kb = s.knowledge_base("packages")
    for tag, folder, names in (("debian", "deb", DEBIAN), ("python", "py", PYTHON)):
        (kb / folder).mkdir()
        for name in names:
            shutil.copy(GOLDEN / "docs" / f"{folder}-{name}.md", kb / folder)
        s.vouch("source", "add", folder, "--recursive", "--tags", tag, cwd=kb)
    say(f"vouch source add deb/ py/ --recursive --tags … → {len(DEBIAN) + len(PYTHON)} sources")

    found = top(s, kb, "create user accounts on a linux machine")
    check(found[0] == "deb-adduser.md", f"hybrid: {found}")
    say(f"vouch search 'create user accounts on a linux machine' (hybrid) → {found[0]}")

    found = top(s, kb, "Burrows-Wheeler", "--fts-only")
    check(found == ["deb-bzip2.md"], f"fts: {found}")
    say(f"vouch search Burrows-Wheeler --fts-only → {found}: the one text with the word")

    paraphrase = "coloured letters in a dos box"  # no word of colorama's description
    by_meaning = top(s, kb, paraphrase, "--vec-only")
    by_words = top(s, kb, paraphrase, "--fts-only")
    check(by_meaning[0] == "py-colorama.md", f"vector: {by_meaning}")
    check(by_words[:1] != ["py-colorama.md"], f"fts: {by_words}")
    say(f"vouch search '{paraphrase}' --vec-only → {by_meaning[0]} (--fts-only: {by_words[0]})")

    found = top(s, kb, "a command line tool", "--tags", "debian", "--kind", "source")
    check(found and all(name.startswith("deb-") for name in found), f"filtered: {found}")
    say(f"vouch search 'a command line tool' --tags debian --kind source → {found}")

    questions = [
        line
        for line in (GOLDEN / "golden.jsonl").read_text().splitlines()
        if json.loads(line)["doc"].removesuffix(".md").split("-", 1)[1] in DEBIAN + PYTHON
    ]
    (s.root / "golden.jsonl").write_text("\n".join(questions) + "\n")
    report = s.vouch_json("eval", str(s.root / "golden.jsonl"), cwd=kb)
    mrr = {
        mode: {group: round(m["mrr@10"], 2) for group, m in groups.items()}
        for mode, groups in report["modes"].items()
    }
    check(report["queries"] == len(questions), f"queries: {report['queries']}")
    check(mrr["vector"]["paraphrase"] > mrr["fts"]["paraphrase"], f"MRR@10: {mrr}")
    check(mrr["fts"]["summary"] >= 0.9, f"MRR@10: {mrr}")
    say(f"vouch eval golden.jsonl ({len(questions)} questions) → MRR@10 by mode and group:")
    for mode, groups in mrr.items():
        say(f"   {mode:<7} " + ", ".join(f"{group} {value}" for group, value in groups.items()))


if __name__ == "__main__":
    run(main)
