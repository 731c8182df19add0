"""Generate realistic vouch knowledge bases of N claims for benchmarks.

    python bench/generate.py --claims 10000 --out bench/out/kb-10k [--seed 0]

or, from another benchmark script in bench/:

    from generate import ensure, generate
    root = ensure(10_000)            # cached under bench/out/kb-10000, reused when current
    root = generate(tmp / "kb", 50)  # a fresh one anywhere

The result is a git repository whose `.vouch/` is exactly what `vouch init` makes, plus
N claims, ~N/10 sources (markdown and text documents), ~N/20 entities, ~N/20 relations,
~N/50 pages and ~N/100 evidence spans, as approved knowledge on `main`. Objects are built
with the kinds' `new()` and written at their sharded paths in the exact bytes the kinds'
`dump()` produces, then committed in ONE commit (plus the small init commit before it).

Speed: ruamel's round-trip dumper costs ~1 ms per object, two minutes alone at 100k
claims, so objects are serialised by `_Emitter`, which renders the same bytes
(scalars it is unsure of are rendered by ruamel itself and cached) and is checked
against the real `dump()` on a sample of every kind while generating. The import commit
is streamed into `git fast-import` while the files are written (git packs on the other
core; one pack, no loose objects, nothing for git's automatic gc to start on later), and
`git reset -q` then gives the index the files' stat data. Measured at 100k claims on a
busy 2-core machine: 42 s this way against 87 s for `git add -A` + commit + repack.

Deterministic: the same seed and generator version give the same tree (fixed
timestamps, a seeded RNG, fixed commit identity and dates).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # imported from a test by file path, or run as a script
    sys.path.insert(0, str(_HERE))

import vocab  # noqa: E402

from vouch.core import ids, yamlio  # noqa: E402
from vouch.kinds import Kind, claim, entity, evidence, page, relation, source  # noqa: E402
from vouch.store import audit  # noqa: E402
from vouch.store.audit import LOG_NAME  # noqa: E402
from vouch.store.initkb import skeleton  # noqa: E402
from vouch.store.kb import decided_path  # noqa: E402

GENERATOR_VERSION = 2  # 2: a decision record for every reviewed object
OUT_DIR = _HERE / "out"
MARKER = "vouch-bench.json"  # kept inside .git/, so the work tree stays clean
BASE_TIME = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
AUTHOR = ("vouch bench", "bench@example.invalid")
GIT_DATE = "2025-06-30T12:00:00Z"
CHECK_EVERY = 97  # compare the fast emitter with the kinds' dump() this often


def counts_for(claims: int) -> dict[str, int]:
    """How many objects of each kind a knowledge base of `claims` claims holds."""
    return {
        "claims": claims,
        "sources": max(1, claims // 10),
        # floors keep tiny knowledge bases (tests) varied: every entity type, some of each
        "entities": max(12, claims // 20),
        "relations": max(3, claims // 20),
        "pages": max(2, claims // 50),
        "evidence": max(2, claims // 100),
    }


# -- serialisation ---------------------------------------------------------------------
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
_HEX = re.compile(r"^[0-9a-f]{64}$")
_NUMERIC = re.compile(r"^[0-9]*(e[0-9]+)?$")  # all digits, or digits-e-digits: a number


class _Emitter:
    """The bytes `Kind.dump()` writes, without ruamel's per-object cost."""

    _PLAIN_OK = frozenset(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;!?'\"()/_+=%@-—"
    )
    _RESERVED = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})

    def __init__(self) -> None:
        self._cache: dict[object, str] = {}
        self.checked = 0

    def scalar(self, value: object) -> str:
        if isinstance(value, str):
            if self._plain(value):
                return value
            if _TIMESTAMP.match(value):  # would resolve to a timestamp: ruamel quotes it
                return f"'{value}'"
            if _HEX.match(value) and not _NUMERIC.match(value):  # a sha256 source id
                return value
        key = (type(value), value)
        cached = self._cache.get(key)
        if cached is None:
            # ruamel decides quoting, number and boolean forms: ask it once per value
            line = yamlio.dump_yaml({"k": value})
            if line.count("\n") != 1:
                raise ValueError(f"multi-line scalar {value!r}")
            cached = self._cache[key] = line[3:-1]
        return cached

    def _plain(self, text: str) -> bool:
        """Conservative: True only where ruamel certainly writes a plain scalar."""
        return (
            bool(text)
            and (text[0].isalpha() or text[0] == "/")
            and text[-1] not in " :"
            and ": " not in text
            and "  " not in text
            and text.lower() not in self._RESERVED
            and all(ch in self._PLAIN_OK or ch == ":" for ch in text)
        )

    def yaml(self, obj: Mapping[str, Any]) -> str:
        out = []
        for key, value in obj.items():
            if isinstance(value, list):
                if value:
                    out.append(f"{key}:\n" + "".join(f"  - {self.scalar(v)}\n" for v in value))
                else:
                    out.append(f"{key}: []\n")
            elif isinstance(value, dict):
                if value:
                    raise ValueError("nested mappings go through ruamel")
                out.append(f"{key}: {{}}\n")
            else:
                out.append(f"{key}: {self.scalar(value)}\n")
        return "".join(out)

    def dump(self, kind: Kind, obj: Mapping[str, Any], n: int) -> str:
        """`kind.dump(obj)`, fast; every CHECK_EVERY-th object is compared with it."""
        obj = kind.normalize(obj)
        kind.validate_or_raise(obj)
        try:
            if kind.body_field is not None:
                meta = {k: v for k, v in obj.items() if k != kind.body_field}
                body = str(obj.get(kind.body_field) or "").strip("\n")
                head = f"---\n{self.yaml(meta)}---\n"
                text = f"{head}\n{body}\n" if body else head
            else:
                text = self.yaml(obj)
        except ValueError:
            return kind.dump(obj)
        if n % CHECK_EVERY == 0:
            expected = kind.dump(obj)
            if text != expected:
                raise AssertionError(
                    f"emitter differs from {kind.name}.dump():\n{text}\n---\n{expected}"
                )
            self.checked += 1
        return text


# -- content ---------------------------------------------------------------------------
class _Names:
    """Entity names by type, unique across the whole knowledge base."""

    TYPES = (  # (entity type, share of all entities)
        ("system", 0.33),
        ("person", 0.22),
        ("team", 0.06),
        ("tool", 0.04),
        ("repo", 0.08),
        ("incident", 0.09),
        ("api", 0.07),
        ("concept", 0.05),
        ("file", 0.03),
        ("workflow", 0.03),
    )

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def make(self, etype: str, n: int) -> str:
        r = self.rng
        for attempt in range(50):
            suffix = f" {n}" if attempt >= 20 else ""  # only when a pool is exhausted
            name = self._candidate(etype, r) + suffix
            if name.lower() not in self.used:
                self.used.add(name.lower())
                return name
        raise AssertionError(f"cannot make a unique {etype} name")

    @staticmethod
    def _candidate(etype: str, r: random.Random) -> str:
        v = vocab
        if etype == "system":
            if r.random() < 0.3:  # widen the pool of names for large knowledge bases
                return f"{r.choice(v.DOMAINS)}-{r.choice(v.DOMAINS)}-{r.choice(v.SYSTEM_SUFFIXES)}"
            return f"{r.choice(v.DOMAINS)}-{r.choice(v.SYSTEM_SUFFIXES)}"
        if etype == "person":
            return f"{r.choice(v.FIRST_NAMES)} {r.choice(v.LAST_NAMES)}"
        if etype == "team":
            return f"{r.choice(v.TEAM_NAMES)} {r.choice(v.TEAM_KINDS)} team"
        if etype == "tool":
            return f"{r.choice(v.TOOLS)}{r.choice(v.TOOL_VARIANTS)}"
        if etype == "repo":
            return f"acme/{r.choice(v.DOMAINS)}-{r.choice(v.SYSTEM_SUFFIXES)}"
        if etype == "incident":
            return f"INC-{r.randint(100, 9999)} {r.choice(v.DOMAINS)} {r.choice(v.SYMPTOMS)}"
        if etype == "api":
            return f"/v{r.randint(1, 4)}/{r.choice(v.DOMAINS)}/{r.choice(v.RESOURCES)}"
        if etype == "concept":
            return f"{r.choice(v.CONCEPTS)} for {r.choice(v.DOMAINS)}"
        if etype == "file":
            return (
                f"{r.choice(v.FILE_DIRS)}/{r.choice(v.DOMAINS)}/"
                f"{r.choice(v.FILE_NAMES)}{r.choice(v.FILE_EXTS)}"
            )
        return f"{r.choice(v.DOMAINS)} {r.choice(v.WORKFLOWS)}"


_SLOT_TYPES = {
    "system": "system",
    "system2": "system",
    "person": "person",
    "team": "team",
    "tool": "tool",
    "tool2": "tool",
    "repo": "repo",
    "incident": "incident",
    "api": "api",
    "concept": "concept",
    "file": "file",
    "workflow": "workflow",
}


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class _Builder:
    """Builds every object in memory (dicts), then writes them."""

    def __init__(self, claims: int, seed: int):
        self.rng = random.Random(seed)
        self.want = counts_for(claims)
        self.span = timedelta(days=360) / max(1, claims)

    def _pick(self, pool: list[int]) -> int:
        # mildly skewed: some entities are talked about far more than others, yet every
        # entity of a type is reachable
        return pool[int(len(pool) * self.rng.random() ** 1.4)]

    def entities(self) -> None:
        n_total = self.want["entities"]
        names = _Names(self.rng)
        self.ents: list[dict[str, Any]] = []
        self.by_type: dict[str, list[int]] = {}
        plan = []
        for etype, share in _Names.TYPES:
            plan += [etype] * max(1, round(n_total * share))
        plan = plan[:n_total] if len(plan) >= n_total else plan + ["system"] * (n_total - len(plan))
        for i, etype in enumerate(plan):
            name = names.make(etype, i)
            when = _stamp(BASE_TIME + timedelta(hours=i))
            desc = None
            if self.rng.random() < 0.6:
                desc = (
                    f"{name} is a {etype} at Acme, "
                    f"{self.rng.choice(('tracked by', 'looked after by', 'owned by'))} "
                    f"the {self.rng.choice(vocab.TEAM_NAMES)} group."
                )
            obj = entity.new(
                name=name,
                type=etype,
                aliases=(
                    [name.replace("-", " ")]
                    if etype == "system" and self.rng.random() < 0.3
                    else None
                ),
                description=desc,
                tags=[etype],
                proposed_by=self.rng.choice(vocab.AGENTS),
                approved_by=self._person_name(),
                created_at=when,
                updated_at=when,
            )
            self.ents.append(obj)
            self.by_type.setdefault(etype, []).append(i)

    def _person_name(self) -> str:
        return f"{self.rng.choice(vocab.FIRST_NAMES)} {self.rng.choice(vocab.LAST_NAMES)}"

    def _fill(self, template: str, used: list[int]) -> str:
        r, v = self.rng, vocab
        values: dict[str, str] = {}
        for slot in dict.fromkeys(_slots(template)):  # a slot used twice is one value
            etype = _SLOT_TYPES.get(slot)
            if etype is not None:
                pool = self.by_type.get(etype) or self.by_type["system"]
                idx = self._pick(pool)
                for _ in range(5):  # "{system} depends on {system2}": two different ones
                    if idx not in used:
                        break
                    idx = self._pick(pool)
                used.append(idx)
                values[slot] = str(self.ents[idx]["name"])
                continue
            values[slot] = {
                "env": lambda: r.choice(v.ENVS),
                "region": lambda: r.choice(v.REGIONS),
                "n": lambda: str(
                    r.choice(
                        (
                            2,
                            3,
                            4,
                            5,
                            6,
                            8,
                            10,
                            12,
                            16,
                            20,
                            25,
                            30,
                            50,
                            64,
                            100,
                            128,
                            200,
                            250,
                            500,
                            1000,
                            2000,
                            5000,
                        )
                    )
                ),
                "dur": lambda: r.choice(v.DURATIONS),
                "pct": lambda: str(r.randint(2, 80)),
                "ver": lambda: f"{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)}",
                "weekday": lambda: r.choice(v.WEEKDAYS),
                "month": lambda: r.choice(v.MONTHS),
                "metric": lambda: r.choice(v.METRICS),
                "config": lambda: r.choice(v.CONFIG_KEYS),
                "resource": lambda: r.choice(v.RESOURCES),
                "symptom": lambda: r.choice(v.SYMPTOMS),
            }[slot]()
        return template.format(**values)

    def claims(self) -> None:
        r = self.rng
        n = self.want["claims"]
        n_sources = self.want["sources"]
        self.claim_objs: list[dict[str, Any]] = []
        self.cites: list[list[int]] = []  # claim index -> source indexes
        self.claims_of_entity: dict[int, list[int]] = {}
        self.claims_of_source: dict[int, list[int]] = {}
        seen: set[str] = set()
        statuses = ("stable",) * 8 + ("actionable",) * 5 + ("working",) * 6
        for i in range(n):
            for _attempt in range(100):
                ctype, tags, template = r.choice(vocab.CLAIM_TEMPLATES)
                used: list[int] = []
                parts = [self._fill(template, used)]
                for follow in r.sample(vocab.FOLLOW_UPS, r.choices((0, 1, 2), (45, 40, 15))[0]):
                    parts.append(self._fill(follow, used))
                text = " ".join(parts)
                cid = claim.KIND.make_id({"text": text})
                if cid not in seen:
                    seen.add(cid)
                    break
            else:
                raise AssertionError("cannot make a unique claim text")
            when = BASE_TIME + self.span * i
            extra_tags = r.sample(
                (
                    "ops",
                    "backend",
                    "infra",
                    "q3",
                    "q4",
                    "customer-facing",
                    "internal",
                    "legacy",
                    "critical",
                ),
                r.choice((0, 0, 1, 2)),
            )
            ent_idx = sorted(set(used))
            obj = claim.new(
                text=text,
                type=ctype,
                status=r.choice(statuses),
                confidence=r.choice((0.5, 0.6, 0.7, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)),
                evidence=None,  # filled once the sources exist (their ids are content hashes)
                entities=[self.ents[e]["id"] for e in ent_idx],
                scope=r.choices(("project", "team", "public"), (80, 15, 5))[0],
                tags=sorted(set(tags) | set(extra_tags)),
                proposed_by=r.choice(vocab.AGENTS),
                approved_by=self._person_name(),
                created_at=_stamp(when),
                updated_at=_stamp(when + timedelta(days=r.randint(0, 30))),
                last_confirmed_at=_stamp(when + timedelta(days=40)) if r.random() < 0.2 else None,
            )
            self.claim_objs.append(obj)
            cited = [r.randrange(n_sources)]
            if r.random() < 0.3 and n_sources > 1:
                cited.append((cited[0] + 1 + r.randrange(n_sources - 1)) % n_sources)
            self.cites.append(cited)
            for s in cited:
                self.claims_of_source.setdefault(s, []).append(i)
            for e in ent_idx:
                self.claims_of_entity.setdefault(e, []).append(i)
        self._link_claims()

    def _link_claims(self) -> None:
        """About 1% superseded pairs and 1% contradicting pairs, kept consistent."""
        r, objs = self.rng, self.claim_objs
        n = len(objs)
        if n < 10:
            return
        free = list(range(n))
        r.shuffle(free)
        pairs = max(1, n // 100)
        for _ in range(pairs):
            old, new = sorted((free.pop(), free.pop()))
            objs[old]["status"] = "superseded"
            objs[old]["superseded_by"] = objs[new]["id"]
            objs[new]["supersedes"] = [objs[old]["id"]]
        for _ in range(pairs):
            a, b = free.pop(), free.pop()
            for x, y in ((a, b), (b, a)):
                objs[x]["status"] = "contested"
                objs[x]["contradicts"] = [objs[y]["id"]]

    def sources(self) -> None:
        r = self.rng
        self.src_objs: list[dict[str, Any]] = []
        self.src_content: list[bytes] = []
        systems = self.by_type.get("system") or [0]
        for s in range(self.want["sources"]):
            stype, media, loc, title, markdown = r.choice(vocab.SOURCE_KINDS)
            about = self.ents[self._pick(systems)]["name"]
            slug = ids.slugify(str(about))
            number = 1000 + s  # unique per source, so no two documents hash alike
            title_text = title.format(name=about, n=number)
            sentences = [
                str(self.claim_objs[c]["text"]) for c in self.claims_of_source.get(s, [])[:12]
            ]
            body = self._document(title_text, sentences, markdown)
            content = body.encode()
            when = _stamp(BASE_TIME + timedelta(hours=3 * s))
            meta = source.new(
                content,
                type=stype,
                locator=loc.format(slug=slug, n=number),
                title=title_text,
                media_type=media,
                tags=sorted({stype, "generated"}),
                created_at=when,
            )
            self.src_objs.append(meta)
            self.src_content.append(content)
        for i, cited in enumerate(self.cites):
            self.claim_objs[i]["evidence"] = [self.src_objs[s]["id"] for s in cited]

    def _document(self, title: str, sentences: list[str], markdown: bool) -> str:
        r = self.rng
        pool = list(sentences)
        lines = [f"# {title}" if markdown else title, ""]
        n_sections = r.randint(2, 4)
        headings = r.sample(vocab.SECTION_HEADINGS, n_sections)
        for k, heading in enumerate(headings):
            if markdown:
                lines += [f"## {heading}", ""]
            for _p in range(r.randint(1, 2)):
                take = [pool.pop(0) for _ in range(min(len(pool), r.randint(1, 3)))]
                if k == n_sections - 1:
                    take += pool
                    pool = []
                para = take + r.sample(vocab.FILLER, r.randint(1, 2))
                r.shuffle(para)
                lines += [" ".join(para), ""]
        return "\n".join(lines).rstrip("\n") + "\n"

    def evidence(self) -> None:
        r = self.rng
        self.ev_objs: list[dict[str, Any]] = []
        seen: set[str] = set()
        candidates = list(range(len(self.claim_objs)))
        r.shuffle(candidates)
        for c in candidates:
            if len(self.ev_objs) >= self.want["evidence"]:
                break
            s = self.cites[c][0]
            lines = self.src_content[s].decode().split("\n")
            text = str(self.claim_objs[c]["text"])
            line_no = next((k for k, ln in enumerate(lines, 1) if text in ln), None)
            if line_no is None:
                continue
            ev = evidence.new(
                source_id=self.src_objs[s]["id"],
                locator=f"L{line_no}",
                quote=text,
                hash=f"sha256:{ids.sha256_hex(text.encode())}",
                created_at=self.claim_objs[c]["created_at"],
            )
            if ev["id"] in seen:
                continue
            seen.add(ev["id"])
            self.ev_objs.append(ev)
            self.claim_objs[c]["evidence"] = [*self.claim_objs[c]["evidence"], ev["id"]]

    def relations(self) -> None:
        r = self.rng
        rules = (  # (source type, relation, target type)
            ("system", "depends_on", "system"),
            ("system", "owned_by", "team"),
            ("system", "uses", "tool"),
            ("incident", "caused_by", "system"),
            ("repo", "implements", "system"),
            ("api", "references", "system"),
            ("person", "owned_by", "team"),
            ("system", "similar_to", "system"),
            ("concept", "supports", "system"),
            ("file", "derived_from", "repo"),
            ("incident", "blocks", "workflow"),
        )
        self.rel_objs: list[dict[str, Any]] = []
        seen: set[str] = set()
        want = self.want["relations"]
        tries = 0
        while len(self.rel_objs) < want and tries < want * 20:
            tries += 1
            a_type, rel, b_type = r.choice(rules)
            a_pool, b_pool = self.by_type.get(a_type), self.by_type.get(b_type)
            if not a_pool or not b_pool:
                continue
            a, b = self._pick(a_pool), self._pick(b_pool)
            if a == b:
                continue
            when = _stamp(BASE_TIME + timedelta(hours=5 * len(self.rel_objs)))
            cited = self.claims_of_entity.get(a, [])
            evidence_ids = list(self.claim_objs[cited[0]]["evidence"][:1]) if cited else None
            obj = relation.new(
                source=self.ents[a]["id"],
                relation=rel,
                target=self.ents[b]["id"],
                confidence=r.choice((0.6, 0.7, 0.8, 0.9)),
                evidence=evidence_ids,
                tags=[rel.replace("_", "-")],
                proposed_by=r.choice(vocab.AGENTS),
                approved_by=self._person_name(),
                created_at=when,
            )
            if obj["id"] not in seen:
                seen.add(obj["id"])
                self.rel_objs.append(obj)

    def pages(self) -> None:
        r = self.rng
        self.page_objs: list[dict[str, Any]] = []
        talked_about = sorted(self.claims_of_entity, key=lambda e: -len(self.claims_of_entity[e]))
        kinds = (
            ("entity", "{name}"),
            ("workflow", "Working on {name}"),
            ("report", "{name}: quarterly report"),
            ("decision", "Decisions about {name}"),
            ("concept", "How {name} fits together"),
        )
        seen: set[str] = set()
        k = 0
        while len(self.page_objs) < self.want["pages"] and talked_about:
            e = talked_about[k % len(talked_about)]
            ptype, title_t = kinds[(k // len(talked_about) + r.randrange(len(kinds))) % len(kinds)]
            k += 1
            name = str(self.ents[e]["name"])
            title = title_t.format(name=name)
            claim_idx = r.sample(
                self.claims_of_entity[e], min(len(self.claims_of_entity[e]), r.randint(3, 12))
            )
            headings = r.sample(vocab.SECTION_HEADINGS, r.randint(2, 5))
            body_lines = [f"Notes on {name}, kept by the owning team.", ""]
            per = max(1, len(claim_idx) // len(headings))
            for h, heading in enumerate(headings):
                last = h == len(headings) - 1
                chunk = claim_idx[h * per :] if last else claim_idx[h * per : (h + 1) * per]
                body_lines += [f"## {heading}", ""]
                body_lines += [
                    f"- {self.claim_objs[c]['text']} [{self.claim_objs[c]['id']}]" for c in chunk
                ] or [r.choice(vocab.FILLER)]
                body_lines.append("")
            when = _stamp(BASE_TIME + timedelta(hours=7 * len(self.page_objs)))
            srcs = sorted({self.claim_objs[c]["evidence"][0] for c in claim_idx})
            obj = page.new(
                title=title,
                type=ptype,
                status=r.choice(("active",) * 5 + ("draft", "stale")),
                claims=[self.claim_objs[c]["id"] for c in claim_idx],
                entities=[self.ents[e]["id"]],
                sources=srcs,
                tags=sorted({ptype, str(self.ents[e]["tags"][0])}),
                proposed_by=r.choice(vocab.AGENTS),
                approved_by=self._person_name(),
                created_at=when,
                updated_at=when,
                body="\n".join(body_lines).rstrip() + "\n",
            )
            if obj["id"] not in seen:
                seen.add(obj["id"])
                self.page_objs.append(obj)
            if k > self.want["pages"] * 10:
                break


def _slots(template: str) -> list[str]:
    import string

    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


# -- writing ---------------------------------------------------------------------------
def _git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": AUTHOR[0],
        "GIT_AUTHOR_EMAIL": AUTHOR[1],
        "GIT_COMMITTER_NAME": AUTHOR[0],
        "GIT_COMMITTER_EMAIL": AUTHOR[1],
        "GIT_AUTHOR_DATE": GIT_DATE,
        "GIT_COMMITTER_DATE": GIT_DATE,
    }
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    proc = subprocess.run(
        [
            "git",
            "-c",
            "gc.auto=0",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
            *args,
        ],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode()[-2000:]}")
    return proc.stdout.decode()


def _event(
    prev: dict[str, Any] | None, name: str, data: dict[str, Any], when: str, n: int
) -> dict[str, Any]:
    """An audit record chained to `prev`, with a fixed id and time (determinism)."""
    record = audit.make_event(name, AUTHOR[0], [], data, str(prev["hash"]) if prev else "")
    record["id"] = f"{when.replace(':', '').replace('-', '')}-{n:08x}"
    record["created_at"] = when
    record["hash"] = audit.event_hash(record)
    return record


class _Writer:
    """Writes files into the work tree and, when streaming, the same bytes into one
    `git fast-import` commit, so git packs objects while Python is still generating."""

    def __init__(self, vouch_dir: Path):
        self.dir = vouch_dir
        self.made: set[Path] = set()
        self.stream: IO[bytes] | None = None

    def write(self, rel: str, data: str | bytes) -> None:
        payload = data.encode() if isinstance(data, str) else data
        path = self.dir / rel
        if path.parent not in self.made:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.made.add(path.parent)
        # plain writes, no fsync: a half-generated knowledge base is thrown away anyway
        path.write_bytes(payload)
        if self.stream is not None:
            self.stream.write(
                b"M 100644 inline .vouch/%s\ndata %d\n%s\n" % (rel.encode(), len(payload), payload)
            )


class _FastImport:
    """One commit on `main` through `git fast-import`: objects go straight into a pack
    (no loose objects to write, no repack), the index is refreshed afterwards."""

    def __init__(self, root: Path, message: str):
        self.root = root
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed in finish()
        self.proc = subprocess.Popen(
            ["git", "-c", "gc.auto=0", "fast-import", "--quiet", "--done"],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=self.errors,
            bufsize=1 << 20,
        )
        assert self.proc.stdin is not None
        self.stdin: IO[bytes] = self.proc.stdin
        when = int(datetime.fromisoformat(GIT_DATE.replace("Z", "+00:00")).timestamp())
        who = f"{AUTHOR[0]} <{AUTHOR[1]}> {when} +0000".encode()
        body = message.encode()
        self.stdin.write(
            b"commit refs/heads/main\nauthor %s\ncommitter %s\ndata %d\n%s\n"
            b"from refs/heads/main^0\n" % (who, who, len(body), body)
        )

    def finish(self) -> None:
        try:
            self.stdin.write(b"\ndone\n")
            self.stdin.close()
        except BrokenPipeError:
            pass
        if self.proc.wait() != 0:
            self.errors.seek(0)
            raise RuntimeError(f"git fast-import failed: {self.errors.read().decode()[-2000:]}")
        self.errors.close()


def _write_objects(b: _Builder, writer: _Writer, em: _Emitter) -> dict[str, int]:
    made = dict.fromkeys(("claims", "sources", "entities", "relations", "pages", "evidence"), 0)
    for plural, kind, objs in (
        ("claims", claim.KIND, b.claim_objs),
        ("entities", entity.KIND, b.ents),
        ("relations", relation.KIND, b.rel_objs),
        ("pages", page.KIND, b.page_objs),
        ("evidence", evidence.KIND, b.ev_objs),
    ):
        for n, obj in enumerate(objs):
            writer.write(kind.path_for(obj["id"]), em.dump(kind, obj, n))
            if kind is not evidence.KIND:
                pid, record = _decision(kind.name, obj)
                writer.write(decided_path(pid), yamlio.dump_yaml(record))
        made[plural] = len(objs)
    for n, (meta, content) in enumerate(zip(b.src_objs, b.src_content, strict=True)):
        writer.write(source.path_for(meta["id"]), em.dump(source.KIND, meta, n))
        writer.write(source.content_path_for(meta["id"]), content)
    made["sources"] = len(b.src_objs)
    return made


def _decision(kind: str, obj: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """The approved decision record an object reviewed through vouch has (as
    `vouch approve` writes it), with a proposal id made of the object's time and id."""
    when = datetime.strptime(str(obj["created_at"]), "%Y-%m-%dT%H:%M:%SZ")
    pid = f"{when:%Y%m%d-%H%M%S}-{ids.sha256_hex(str(obj['id']).encode())[:8]}"
    return pid, {
        "proposal_id": pid,
        "decision": "approved",
        "kind": kind,
        "object_id": str(obj["id"]),
        "proposer": str(obj["proposed_by"]),
        "decided_by": str(obj["approved_by"]),
        "decided_at": str(obj.get("updated_at") or obj["created_at"]),
    }


def generate(out: Path, claims: int, seed: int = 0, *, progress: bool = False) -> Path:
    """Create a git repository at `out` holding a knowledge base of `claims` claims."""
    out = Path(out).resolve()
    if claims < 1:
        raise ValueError("claims must be at least 1")
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} exists and is not empty")
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = round(now - clock, 3)
        clock = now
        if progress:
            print(f"  {name:<10} {timings[name]:7.2f} s", file=sys.stderr)

    out.mkdir(parents=True, exist_ok=True)
    _git(out, "init", "-q", "-b", "main")
    for key, value in (("user.name", AUTHOR[0]), ("user.email", AUTHOR[1]), ("gc.auto", "0")):
        _git(out, "config", key, value)
    vouch_dir = out / ".vouch"
    writer = _Writer(vouch_dir)
    (out / "README.md").write_text(
        f"A generated vouch knowledge base: {claims} claims, "
        f"seed {seed} (bench/generate.py v{GENERATOR_VERSION}).\n"
    )
    for name, payload in skeleton().items():
        writer.write(name, payload)
    init_event = _event(None, "kb.init", {}, _stamp(BASE_TIME - timedelta(days=1)), 0)
    writer.write(LOG_NAME, audit.to_line(init_event))
    _git(out, "add", "-A")
    _git(
        out,
        "commit",
        "-q",
        "-m",
        "vouch: initialise knowledge base\n\nVouch-Event: kb.init\nVouch-Actor: vouch bench",
    )
    lap("init")

    b = _Builder(claims, seed)
    b.entities()
    b.claims()
    b.sources()
    b.evidence()
    b.relations()
    b.pages()
    lap("build")

    em = _Emitter()
    commit = _FastImport(
        out,
        f"vouch: import {claims} generated claims\n\n"
        "Vouch-Event: kb.import\nVouch-Actor: vouch bench\n",
    )
    writer.stream = commit.stdin
    try:
        made = _write_objects(b, writer, em)
    except BrokenPipeError:
        commit.finish()  # raises with git's own message
        raise
    data = {
        "generator": "bench/generate.py",
        "version": GENERATOR_VERSION,
        "seed": seed,
        "counts": made,
    }
    when = _stamp(BASE_TIME + timedelta(days=365))
    import_event = _event(init_event, "kb.import", data, when, 1)
    writer.write(LOG_NAME, audit.to_line(init_event) + audit.to_line(import_event))
    lap("write")
    commit.finish()
    lap("pack")
    # the work tree already holds every file: give the index their stat data, so that
    # `git status` (and vouch's dirty checks) see a clean tree without rehashing
    _git(out, "reset", "-q")
    lap("index")
    head = _git(out, "rev-parse", "HEAD").strip()
    marker = {
        "version": GENERATOR_VERSION,
        "claims": claims,
        "seed": seed,
        "head": head,
        "counts": made,
        "timings": timings,
        "checked_against_dump": em.checked,
    }
    (out / ".git" / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
    return out


def marker(root: Path) -> dict[str, Any] | None:
    """What generated `root` (None when it was not generated, or half-written)."""
    try:
        found = json.loads((Path(root) / ".git" / MARKER).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return found if isinstance(found, dict) else None


def git(root: Path, *args: str) -> str:
    """`git ARGS` in `root` (a benchmark's own plumbing; vouch itself uses vouch/git/)."""
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def private_clone(claims: int, name: str, user: str = "Bench Person") -> Path:
    """A fresh clone of the generated KB of `claims` claims at `bench/out/<name>-<claims>`
    (objects hard-linked, work tree checked out), so a benchmark's writes never touch
    the shared one."""
    src = ensure(claims)
    dest = OUT_DIR / f"{name}-{claims}"
    if dest.exists():
        shutil.rmtree(dest)
    git(src.parent, "clone", "-q", str(src), str(dest))
    git(dest, "config", "user.name", user)
    git(dest, "config", "user.email", "bench@example.invalid")
    git(dest, "config", "gc.auto", "0")
    git(dest, "remote", "remove", "origin")
    return dest


def ensure(claims: int, seed: int = 0, out_dir: Path = OUT_DIR) -> Path:
    """The cached knowledge base `bench/out/kb-<claims>[-s<seed>]`, (re)generated as needed.

    Benchmarks that write to it should call `restore(root)` afterwards.
    """
    root = out_dir / (f"kb-{claims}" if seed == 0 else f"kb-{claims}-s{seed}")
    if _current(root, claims, seed):
        return root
    out_dir.mkdir(parents=True, exist_ok=True)
    # benchmarks run side by side: one generates, the others wait and then reuse it; the
    # knowledge base appears under its name only when complete
    with open(out_dir / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _current(root, claims, seed):
            return root
        if root.exists():
            shutil.rmtree(root)
        tmp = out_dir / f".{root.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        generate(tmp, claims, seed)
        os.rename(tmp, root)
    return root


def _current(root: Path, claims: int, seed: int) -> bool:
    found = marker(root)
    return bool(
        found
        and found.get("version") == GENERATOR_VERSION
        and found.get("seed") == seed
        and found.get("claims") == claims
    )


def restore(root: Path) -> None:
    """Put a generated knowledge base back to its generated state after a benchmark wrote
    to it: HEAD reset to the generated commit, vouch refs and stray files removed."""
    found = marker(root)
    if not found:
        raise ValueError(f"{root} was not made by bench/generate.py")
    refs = _git(root, "for-each-ref", "--format=%(refname)", "refs/heads/vouch/", "refs/vouch/")
    for ref in refs.split():
        _git(root, "update-ref", "-d", ref)
    _git(root, "checkout", "-q", "-f", "main")
    _git(root, "reset", "-q", "--hard", found["head"])
    _git(root, "clean", "-q", "-fdx", "-e", ".vouch/index/")


def _iter_sizes(root: Path) -> Iterator[int]:
    for base, _dirs, files in os.walk(root / ".vouch"):
        for f in files:
            yield (Path(base) / f).stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, required=True)
    parser.add_argument("--out", type=Path, help="default: bench/out/kb-<claims>")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)
    out = args.out or OUT_DIR / f"kb-{args.claims}"
    if args.force and out.exists():
        shutil.rmtree(out)
    start = time.perf_counter()
    try:
        root = generate(out, args.claims, args.seed, progress=True)
    except (FileExistsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - start
    info = marker(root) or {}
    files = sum(1 for _ in _iter_sizes(root))
    print(
        json.dumps(
            {
                "root": str(root),
                "seconds": round(elapsed, 2),
                "files": files,
                "counts": info.get("counts"),
                "head": info.get("head"),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
