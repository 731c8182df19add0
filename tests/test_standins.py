"""Every hand-written stand-in for a dependency gives the dependency's exact answer on
everything it accepts, and declines the rest (which then goes to the dependency).

- `vouch.fastyaml` (knowledge files, config.yaml) against PyYAML / python-frontmatter;
- `vouch.fastdump` (every knowledge file vouch writes) against ruamel's round-trip dumper;
- `vouch.wordpiece` (cold query tokens) against `tokenizers`;
- `vouch.index.lexical.postings` (a warm process's lexical ranking) against FTS5's
  `bm25()`: tests/test_postings.py.

(The safetensors header reader that mapped the vector table went: the `safetensors`
library reading a query's few rows costs ~0.6 ms more, too little to keep a parser of
a binary format for.)

Each is checked on generated input (hypothesis and seeded random documents, including
mutations) and on real input (files vouch writes, the repository's own YAML and text),
and each check also requires the stand-in to accept a good share of its input, so a
stand-in that declined everything could not pass. What each saves: docs/design.md,
"Hand-written stand-ins".
"""

from __future__ import annotations

import importlib.util
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_index_fastyaml import TRICKY, agrees, same

from vouch.core import fastdump, fastyaml, yamlio
from vouch.embed import model as embed
from vouch.embed import table as vtable
from vouch.embed import wordpiece
from vouch.errors import CorruptFile
from vouch.index import vectors
from vouch.kinds import KINDS

ROOT = Path(__file__).resolve().parents[1]

# -- fastyaml against PyYAML ---------------------------------------------------------------
SPECIAL = [
    "~",
    "null",
    "Null",
    "NULL",
    "yes",
    "Yes",
    "NO",
    "on",
    "Off",
    "true",
    "False",
    "y",
    "n",
    "0",
    "-0",
    "+5",
    "12",
    "007",
    "0o17",
    "0x1F",
    "-0x1F",
    "0b101",
    "-0b1",
    "1_000",
    "1:20",
    "-1:20:30",
    "0.5",
    "-0.0",
    "+1.5",
    "1.",
    "1.5e+3",
    "1e5",
    ".5",
    "+.5",
    "-.5",
    ".inf",
    "-.Inf",
    ".nan",
    "1:20.5",
    "2025-01-01",
    "2025-1-1 10:00:00",
    "2025-01-01T10:00:00Z",
    "20250101-100000-1e345678",
    "20250101-100000-12345678",
    "<<",
    "=",
    "-",
    "?",
    ":",
    "--",
    "---",
    "...",
    "a:b",
    "a: b",
    "a #b",
    "a#b",
    "#a",
    "'a'",
    "'it''s'",
    "'a'b'",
    '"a"',
    '"a\\nb"',
    '"a"b"',
    "''",
    '""',
    "[]",
    "{}",
    "[a]",
    "{a: 1}",
    "&a x",
    "*a",
    "!t x",
    "|",
    ">",
    "%x",
    "@x",
    "`x",
    ",x",
    "-x",
    "?x",
    ":x",
    "x:",
    "- x",
    "? x",
    "a ",
    " a",
    "ü",
    "\u00a0",
    "\u3000x",
    "a\u2028b",
    "\x85",
    "\ufeff",
]
_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            *string.printable,
            "ü",
            "é",
            "\u00a0",
            "\u2028",
            "\x85",
            "\ufeff",
            "\u3000",
            "😀",
            "\x00",
            "\x7f",
        ]
    ),
    max_size=12,
)
SCALARS = st.one_of(
    st.sampled_from(SPECIAL),
    st.sampled_from(TRICKY),
    _TEXT,
    st.from_regex(r"[A-Za-z][A-Za-z0-9 ._/-]{0,15}", fullmatch=True),
    st.from_regex(r"[-+]?[0-9_]{1,6}(\.[0-9_]{0,4})?", fullmatch=True),
)
KEYS = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True),
    st.sampled_from(
        ["yes", "No", "null", "on", "y", "1", "-a", "a b", "<<", "id", "id", "x:", "'q'", "ü", "_"]
    ),
)


def _render(node: Any, rng: random.Random, indent: int = 0) -> list[str]:
    """Lines of a block mapping, in vouch's layout or one of many a person might write."""
    lines: list[str] = []
    pad = " " * indent
    for key, value in node:
        if rng.random() < 0.08:
            lines.append(rng.choice(["", "   ", pad + "# note", "#", pad + "  # deeper"]))
        tail = rng.choice(["", "", "", " ", "  # c", "\t"]) if rng.random() < 0.1 else ""
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            lines.append(f"{pad}{key}:{tail}")
            lines.extend(_render(value, rng, indent + rng.choice([2, 2, 4, 1])))
        elif isinstance(value, list):
            lines.append(f"{pad}{key}:{tail}")
            offset = rng.choice([2, 2, 2, 4, 0, 1])
            lines.extend(
                f"{pad}{' ' * offset}-{rng.choice([' ', ' ', '  ', ''])}{item}" for item in value
            )
        else:
            lines.append(f"{pad}{key}:{rng.choice([' ', ' ', ' ', '  ', ''])}{value}{tail}")
    return lines


def _document(rng: random.Random, draw_scalar: Any, draw_key: Any, depth: int = 0) -> Any:
    out: list[tuple[str, Any]] = []
    for _ in range(rng.randint(0 if depth else 1, 5)):
        roll = rng.random()
        if roll < 0.6:
            value: Any = draw_scalar()
        elif roll < 0.7:
            value = rng.choice(["[]", "{}", ""])
        elif roll < 0.85 or depth >= 2:
            value = [draw_scalar() for _ in range(rng.randint(1, 3))]
        else:
            value = _document(rng, draw_scalar, draw_key, depth + 1) or [("k", "v")]
        out.append((draw_key(), value))
    return out


def _mutate(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(chars) + 1)
        roll = rng.random()
        if roll < 0.4:
            chars.insert(at, rng.choice(" -:#'\"\n\t[]{}&*!|>%@`,?~0aY."))
        elif roll < 0.7 and at < len(chars):
            del chars[at]
        elif at < len(chars):
            chars[at] = rng.choice(" -:#'\"\n\ta0")
    return "".join(chars)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.randoms(use_true_random=False))
def test_fastyaml_gives_pyyamls_answer_or_none_on_generated_documents(
    data: st.DataObject, rng: random.Random
) -> None:
    doc = _document(rng, lambda: data.draw(SCALARS), lambda: data.draw(KEYS))
    text = "\n".join(_render(doc, rng)) + rng.choice(["\n", "", "\n\n"])
    agrees(text)
    agrees(_mutate(text, rng))


def test_fastyaml_on_many_seeded_documents_answers_often_and_always_right() -> None:
    rng = random.Random(11)
    words = [
        "deploy",
        "the",
        "API",
        "retries",
        "3",
        "times",
        "ok",
        "v1.2",
        "a-b",
        "x_y",
        "café",
        "50%",
        "it's",
        "path/to/file",
        "see",
        "#42",
        "2025",
        "on-call",
    ]

    def scalar() -> str:
        if rng.random() < 0.1:
            return rng.choice(SPECIAL + TRICKY)
        return " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))

    def key() -> str:
        return rng.choice(
            [
                "id",
                "text",
                "type",
                "status",
                "tags",
                "a",
                "b",
                "c",
                "search",
                "index",
                "auto_refresh",
                "x-y",
                "yes",
                "No",
            ]
        ) + ("" if rng.random() < 0.2 else str(rng.randint(0, 999)))

    answered = mutated = 0
    for n in range(6000):
        text = "\n".join(_render(_document(rng, scalar, key), rng)) + "\n"
        answered += agrees(text)
        if n % 3 == 0:
            mutated += agrees(_mutate(text, rng))
    assert answered > 800 and mutated > 100  # it reads plain files itself, and is right


@pytest.fixture(scope="module")
def generated_kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 300-claim knowledge base from bench/generate.py: every kind of file vouch writes."""
    spec = importlib.util.spec_from_file_location(
        "bench_generate_standins", ROOT / "bench" / "generate.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    out: Path = module.generate(tmp_path_factory.mktemp("gen") / "kb", 300, seed=7)
    return out


def test_fastyaml_reads_every_file_vouch_writes_as_pyyaml_does(generated_kb: Path) -> None:
    root = generated_kb
    files = [p for p in (root / ".vouch").rglob("*") if p.suffix in (".yaml", ".md")]
    fast = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".md":
            split = fastyaml.split_page(text)
            assert split is not None and same(split, yamlio.load_markdown(text)), path
            fast += 1
        else:
            fast += agrees(text)
    assert len(files) > 350 and fast >= 0.98 * len(files)
    # and the kinds' reader gives the same objects whichever parser answered
    for plural in ("claims", "entities", "relations", "pages", "sources", "evidence"):
        kind = next(k for k in KINDS.values() if k.plural == plural)
        for path in sorted((root / ".vouch" / plural).rglob("*"))[:40]:
            if path.is_file() and path.name != "content":
                text = path.read_text(encoding="utf-8")
                slow = (
                    yamlio.load_markdown(text) if kind.body_field else (yamlio.load_yaml(text), "")
                )
                data = {**slow[0], "body": slow[1]} if kind.body_field else slow[0]
                assert same(kind.load(text), kind.normalize(data)), path


def _real_yaml_files() -> list[Path]:
    found = [
        ROOT / "vouch" / "templates" / "config.yaml",
        ROOT / ".pre-commit-config.yaml",
        ROOT / ".pre-commit-hooks.yaml",
    ]
    for base in (Path(sys.prefix), Path("/usr/share")):
        found += [p for pattern in ("*.yaml", "*.yml") for p in base.rglob(pattern)]
    return [p for p in found if p.is_file()]


def _tracked_lines(patterns: tuple[str, ...], limit: int) -> list[str]:
    """Non-blank lines of the repository's tracked files matching `patterns`: what people
    here wrote. From `git ls-files`, not a glob, which would walk bench/out's generated
    knowledge bases and a virtual environment inside the clone (CI's .ci-venv)."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--", *patterns], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    lines: list[str] = []
    for name in sorted(n for n in tracked.split("\0") if n):
        path = ROOT / name
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            lines += [line for line in text.splitlines() if line.strip()]
        if len(lines) >= limit:
            break
    return lines[:limit]


def test_fastyaml_on_real_yaml_files_and_real_text() -> None:
    for path in _real_yaml_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        agrees(text)
    # every line of the repository's documents and code as a hand-written value
    lines = _tracked_lines(("*.md", "*.py", "*.txt"), 40000)
    answered = sum(agrees(f"text: {line}\nitems:\n  - {line.strip()}\n") for line in lines)
    assert len(lines) > 10000 and answered > len(lines) // 3


def test_fastyaml_splits_pages_exactly_as_frontmatter_does() -> None:
    rng = random.Random(5)
    pieces = [
        "---",
        "----",
        "--- ",
        "\n",
        "\r\n",
        " ",
        "\u2028",
        "\x1c",
        "# H",
        "text",
        "...",
        "\t",
        "a: b",
    ]
    fast = 0
    for _ in range(4000):
        body = "".join(rng.choice(pieces) + rng.choice(["", "\n"]) for _ in range(6))
        head = rng.choice(["---\n", "---\n", "--- \n", "----\n", "\n---\n", "---\r\n"])
        meta = rng.choice(["id: x\ntitle: T\n", "id: x\ntags:\n  - a\n", "", "a: [1]\n"])
        close = rng.choice(["---\n", "---\n", "---", "--- \n", "---\n\n", "---\r\n"])
        text = head + meta + close + body
        split = fastyaml.split_page(text)
        try:
            expected: Any = yamlio.load_markdown(text)
        except CorruptFile:
            assert split is None, text
            continue
        if split is not None:
            fast += 1
            assert same(split, expected), text
    assert fast > 250


# -- fastdump against ruamel ---------------------------------------------------------------
def writes_alike(data: dict[str, Any]) -> bool:
    """fastdump writes ruamel's bytes for `data`, or declines; True when it answered."""
    fast = fastdump.dump(data)
    if fast is not None:
        assert fast == yamlio.ruamel_dump(data), data
    return fast is not None


def _value(rng: random.Random, draw_scalar: Any, depth: int = 0) -> Any:
    roll = rng.random()
    if roll < 0.55:
        return draw_scalar()
    if roll < 0.6:
        return rng.choice([None, [], {}, True, False])
    if roll < 0.7:
        return rng.choice(
            [rng.randint(-(10**12), 10**12), rng.random() * 10 ** rng.randint(-8, 20), 0.0, -1.5]
        )
    if roll < 0.85 or depth >= 2:
        return [draw_scalar() if rng.random() < 0.9 else rng.randint(0, 9) for _ in range(3)]
    return {f"k{n}": _value(rng, draw_scalar, depth + 1) for n in range(rng.randint(1, 3))}


def _object(rng: random.Random, draw_scalar: Any, draw_key: Any) -> dict[str, Any]:
    return {draw_key(): _value(rng, draw_scalar) for _ in range(rng.randint(1, 6))}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.randoms(use_true_random=False))
def test_fastdump_gives_ruamels_bytes_or_none_on_generated_objects(
    data: st.DataObject, rng: random.Random
) -> None:
    writes_alike(_object(rng, lambda: data.draw(SCALARS), lambda: data.draw(KEYS)))


def test_fastdump_on_every_kind_of_scalar_answers_often_and_always_right() -> None:
    rng = random.Random(5)
    alphabet = string.printable + "üé\u00a0\u2028\x85\ufeff\u3000😀\x00\x7f—’"
    values: list[Any] = [*SPECIAL, *TRICKY, "", "y", "n", "…", "a—b", "50%", "it's ok"]
    values += [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))) for _ in range(1200)
    ]
    values += [
        "".join(rng.choice("0123456789abcdef") for _ in range(rng.randint(1, 8)))
        for _ in range(250)
    ]
    values += [
        "".join(rng.choice("0123456789eEx.+-_:ob ") for _ in range(rng.randint(1, 6)))
        for _ in range(250)
    ]
    values += [
        f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        f"T10:00:0{rng.randint(0, 9)}Z"
        for _ in range(50)
    ]
    values += [  # proposal ids (decision records): digits, dashes and hex
        f"{rng.randint(0, 99999999):08d}-{rng.randint(0, 999999):06d}-"
        + "".join(rng.choice("0123456789abcdef" if n % 2 else "0123456789e") for _ in range(8))
        for n in range(50)
    ]
    values += [rng.random() * 10 ** rng.randint(-20, 20) for _ in range(150)]
    values += [rng.randint(-(10**20), 10**20) for _ in range(100)] + [True, False, 0.1 + 0.2]
    values += ["word " * 900, "x" * 4100, "a " * 2100]  # ruamel folds past column 4096
    answered = sum(writes_alike({"text": v, "items": [v], "nested": {"v": v}}) for v in values)
    assert answered > len(values) // 3
    # and whichever wrote it, what is written reads back as it was (NEL did not: a
    # single-quoted U+0085 came back as a space)
    for v in values:
        data = {"text": v, "items": [v]}
        assert yamlio.load_yaml(yamlio.dump_yaml(data)) == data, repr(v)


def test_fastdump_rewrites_every_file_vouch_wrote_byte_for_byte(generated_kb: Path) -> None:
    root = generated_kb
    files = [p for p in (root / ".vouch").rglob("*.yaml") if p.name != "config.yaml"]
    fast = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        data = yamlio.load_yaml(text)
        assert yamlio.ruamel_dump(data) == text, path  # what ruamel writes for it
        written = fastdump.dump(data)
        assert written in (None, text), path
        fast += written is not None
    assert len(files) > 300 and fast >= 0.98 * len(files)


def test_fastdump_on_real_text() -> None:
    lines = _tracked_lines(("*.md", "*.py", "*.txt"), 1500)
    answered = sum(writes_alike({"text": line, "items": [line.strip()]}) for line in lines)
    assert len(lines) == 1500 and answered > 0.9 * len(lines)


# -- wordpiece against tokenizers ----------------------------------------------------------
@pytest.fixture(scope="module")
def model() -> embed.Embedder:
    return embed.Embedder(embed.describe(embed.default_model_dir(), "default"))


@pytest.fixture(scope="module")
def table(model: embed.Embedder, tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = model.wordpiece_table()
    assert text is not None
    path = tmp_path_factory.mktemp("words") / vectors.WORDPIECE
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(embed.default_model_dir() / "tokenizer.json"))
    reference.no_padding()
    reference.no_truncation()
    return reference


@pytest.fixture(scope="module")
def words(model: embed.Embedder, table: Path) -> wordpiece.WordPiece:
    found = wordpiece.WordPiece.load(table, model.model_id)
    assert found is not None
    return found


def _vocab_soup(rng: random.Random, vocab: list[str], n: int) -> list[str]:
    """Texts of real vocabulary pieces glued by spaces, punctuation and continuations,
    in mixed case: the words a query is made of, and the hard cases between them."""
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 8)):
            token = rng.choice(vocab).removeprefix("##")
            if rng.random() < 0.3:
                token = token.upper() if rng.random() < 0.5 else token.capitalize()
            parts.append(
                token
                + rng.choice(
                    ["", "", " ", " ", "-", ".", "'s", "\t", "\n", "!!", "_", "0", "##", "  "]
                )
            )
        out.append("".join(parts))
    return out


def test_wordpiece_gives_tokenizers_ids_on_generated_and_real_text(
    words: wordpiece.WordPiece, tokenizer: Any
) -> None:
    rng = random.Random(3)
    vocab = [t for t in tokenizer.get_vocab() if t.isascii()]
    real = [line.strip() for line in _tracked_lines(("*.md", "*.txt"), 20000)]
    texts = [*real, *_vocab_soup(rng, vocab, 8000)]
    accepted = 0
    for text in texts:
        ids = words.ids(text)
        if ids is not None:
            accepted += 1
            assert ids == tokenizer.encode(text, add_special_tokens=False).ids, text
    assert len(real) > 5000 and accepted > 0.8 * len(texts)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", max_codepoint=0x17F), max_size=60))
def test_wordpiece_never_disagrees_on_any_text(
    words: wordpiece.WordPiece, tokenizer: Any, text: str
) -> None:
    ids = words.ids(text)
    if ids is not None:
        assert ids == tokenizer.encode(text, add_special_tokens=False).ids


def test_text_wordpiece_declines_gets_the_librarys_vector(
    model: embed.Embedder, table: Path, words: wordpiece.WordPiece
) -> None:
    declined = [
        "ÜNÏCÖDÉ café",
        "what is [UNK] for",
        "[PAD]ding",
        "bell\x07char",
        "naïve",
        "東京 deploys",
        "emoji 😀 here",
        "x\x00y",
    ]
    assert all(words.ids(t) is None for t in declined)
    bulk = model.encode(declined * 20)[: len(declined)]  # model2vec and tokenizers
    fresh = embed.Embedder(model.ref)
    for text, row in zip(declined, bulk, strict=True):
        assert np.array_equal(fresh.encode_query(text, table), row), text


# -- the vector table: read by `safetensors`, one way or the other -------------------------
def test_the_table_gives_the_same_rows_read_one_by_one_or_whole(tmp_path: Path) -> None:
    # (the hand-written safetensors header reader went: it saved ~0.6 ms a cold query)
    from safetensors.numpy import load_file, save_file

    shipped = embed.default_model_dir() / "model.safetensors"
    whole = load_file(str(shipped))["embeddings"]
    rng = random.Random(2)
    few = [rng.randrange(len(whole)) for _ in range(40)] + [7, 7, 0]
    many = [rng.randrange(len(whole)) for _ in range(vtable.FEW_ROWS + 50)]
    table = vtable.Table(shipped)
    assert np.array_equal(table.rows(few), whole[few]) and table._whole is None
    assert np.array_equal(table.rows(many), whole[many]) and table._whole is not None
    assert np.array_equal(table.rows(few), whole[few])
    extra = tmp_path / "model.safetensors"
    save_file({"embeddings": whole[:4], "weights": np.ones(4, np.float32)}, str(extra))
    with pytest.raises(vtable.NotTableModel):
        vtable.Table(extra)  # model2vec's own machinery reads this model
