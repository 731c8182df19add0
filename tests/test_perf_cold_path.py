"""The cold search path: what it imports, and the shortcuts it takes giving the same answers.

A cold `vouch search` tokenizes plain ASCII queries with `vouch.wordpiece` (not the
`tokenizers` library), reads only the rows of the model's table it needs, reads
config.yaml without PyYAML (`vouch.fastyaml`) and embeds the query while git checks
freshness. Each shortcut is checked here against the real thing (and in
test_standins.py on many more inputs).
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import git
from index_support import claim, commit, ids_of, index_dir
from test_index_fastyaml import same

from vouch import launch
from vouch.core import config, fastyaml, yamlio
from vouch.embed import model as embed
from vouch.embed import wordpiece
from vouch.errors import CorruptFile
from vouch.git import EMPTY_TREE, command
from vouch.index import Index, freshness, vectors
from vouch.store.kb import KB

GOLDEN = Path(__file__).resolve().parents[1] / "examples" / "golden" / "golden.jsonl"


@pytest.fixture(scope="module")
def model() -> embed.Embedder:
    return embed.Embedder(embed.describe(embed.default_model_dir(), "default"))


@pytest.fixture(scope="module")
def table(model: embed.Embedder, tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = model.wordpiece_table()
    assert text is not None  # the bundled model is BERT WordPiece
    path = tmp_path_factory.mktemp("words") / vectors.WORDPIECE
    path.write_text(text, encoding="utf-8")
    return path


def _texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    golden = [json.loads(line)["query"] for line in GOLDEN.read_text().splitlines()]
    texts = [
        *golden[:200],
        "roll back the billing release " * 40,  # longer than max_length characters
        "x" * 99,
        "y" * 100,
        "z" * 101 + " ok",  # max_input_chars_per_word is 100
        "Don't stop-believing!! (v2.3_beta) ~/.config",
        "   ",
        "",
        "a\tb\nc\rd",
        "ÜNÏCÖDÉ café",
        "what is [UNK] for",
        "[PAD]ding",
        "[pad] and [cls]",
        "bell\x07char",
        "del\x7fchar",
    ]
    alphabet = string.ascii_letters + string.digits + string.punctuation + " \t\n"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(n)]
    return texts


def test_wordpiece_reproduces_the_tokenizers_library(table: Path) -> None:
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(embed.default_model_dir() / "tokenizer.json"))
    reference.no_padding()
    reference.no_truncation()
    words = wordpiece.WordPiece.load(
        table, embed.describe(embed.default_model_dir(), "default").model_id
    )
    assert words is not None
    accepted = 0
    for text in _texts(3000):
        ids = words.ids(text)
        if ids is None:
            continue
        accepted += 1
        assert ids == reference.encode(text, add_special_tokens=False).ids, text
    assert accepted > 3000
    # the model's added tokens ([PAD], [UNK]) are matched before normalizing
    for declined in ("ÜNÏCÖDÉ café", "what is [UNK] for", "[PAD]ding", "bell\x07char"):
        assert words.ids(declined) is None


def test_query_vectors_equal_model2vec_with_the_table(model: embed.Embedder, table: Path) -> None:
    texts = _texts(300, seed=1)
    bulk = model.encode(texts)  # model2vec itself (more than a few texts)
    for text, row in zip(texts, bulk, strict=True):
        assert np.array_equal(model.encode_query(text, table), row), text


def test_a_table_for_another_model_is_ignored(
    model: embed.Embedder, table: Path, tmp_path: Path
) -> None:
    other = tmp_path / "words"
    header, _, rest = table.read_text().partition("\n")
    other.write_text(json.dumps({**json.loads(header), "model_id": "other@1"}) + "\n" + rest)
    assert wordpiece.WordPiece.load(other, model.model_id) is None
    assert wordpiece.WordPiece.load(tmp_path / "missing", model.model_id) is None
    fresh = embed.Embedder(model.ref)
    text = "rotate the signing keys"
    assert np.array_equal(fresh.encode_query(text, other), model.encode([text] * 65)[0])


@pytest.mark.parametrize("damage", ["truncate", "drop-token", "rename-token"])
def test_a_damaged_table_is_ignored_not_trusted(
    model: embed.Embedder, table: Path, tmp_path: Path, damage: str
) -> None:
    # review: a truncated vectors.words loaded fine and silently changed query vectors
    text = table.read_text()
    header, _, rest = text.partition("\n")
    damaged = {
        "truncate": text[: len(text) // 3],
        "drop-token": header + "\n" + rest.replace("\nundo\n", "\n", 1),
        "rename-token": header + "\n" + rest.replace("\nundo\n", "\nundox\n", 1),
    }[damage]
    assert damaged != text
    path = tmp_path / "words"
    path.write_text(damaged)
    assert wordpiece.WordPiece.load(path, model.model_id) is None
    query = "kubectl rollbacks undo"
    fresh = embed.Embedder(model.ref)
    assert np.array_equal(fresh.encode_query(query, path), model.encode([query] * 65)[0])


def test_the_index_keeps_the_table_and_restores_it(kb: KB) -> None:
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)
    index = Index.open(kb)
    path = index_dir(kb) / vectors.WORDPIECE
    try:
        assert path.is_file()
        path.unlink()  # an index built before the table existed
        index._wordpiece_checked = False
        index.embed_query("undo a deploy")
        assert path.is_file()
    finally:
        index.close()
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("enabled: true", "enabled: false"))
    Index.open(KB(kb.dir)).close()  # rebuilt without vectors: no table either
    assert not path.exists()


def test_meanwhile_runs_once_while_a_stale_index_is_refreshed(kb: KB) -> None:
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)
    Index.open(kb).close()
    claim(kb, "Payments retry three times before paging")  # not committed: work tree
    seen: list[Index] = []
    index = Index.open(KB(kb.dir), meanwhile=seen.append)
    try:
        assert len(seen) == 1 and seen[0] is index
        assert index.last_report is not None and index.last_report.mode == "refresh"
        assert len(ids_of(index, index.lexical("payments retry"))) == 1
        seen.clear()
        assert index.ensure_fresh(meanwhile=seen.append) is None and len(seen) == 1
    finally:
        index.close()


def test_a_failure_meanwhile_stops_the_check(kb: KB) -> None:
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)

    def fail(index: Index) -> None:
        raise RuntimeError("model broke")

    with pytest.raises(RuntimeError):
        Index.open(kb, meanwhile=fail)
    Index.open(kb).close()  # nothing left behind


def test_a_read_starts_git_before_its_imports_and_the_check_takes_it_over(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`vouch.launch.begin` starts the freshness check's git commands for a search of a
    plain knowledge base; the index's check adopts them, and sees a work-tree edit made
    before they started. Other commands, and a directory without a knowledge base, start
    nothing; processes nobody took over are stopped."""
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)
    Index.open(kb).close()
    claim(kb, "Payments retry three times before paging")  # uncommitted, before git runs
    monkeypatch.chdir(kb.root / ".vouch")
    launch.begin(["--json", "search", "payments", "--top", "3"])
    assert len(command._EARLY) == 2
    index = Index.open(KB.open())
    try:
        assert command._EARLY == {}  # taken over, not run again
        assert index.last_report is not None and index.last_report.mode == "refresh"
        assert len(ids_of(index, index.lexical("payments retry"))) == 1
    finally:
        index.close()
    launch.begin(["approve", "p1"])  # writes: nothing ahead of time
    launch.begin(["search", "x", "--kb", str(kb.root.parent)])  # no knowledge base there
    assert command._EARLY == {}
    launch.begin(["--kb", str(kb.root), "context", "a task"])
    started = list(command._EARLY.values())
    assert len(started) == 2
    command._abandon()  # what exit does with them
    assert command._EARLY == {} and all(s.returncode is not None for s in started)


def test_freshness_before_the_first_commit(tmp_path: Path) -> None:
    root = tmp_path / "new"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".vouch").mkdir()
    (root / ".vouch" / "config.yaml").write_text(config.template_text("config.yaml"))
    git(root, "add", ".vouch")
    kb = KB.open(root)
    state = freshness.current(kb)
    assert state.tree == EMPTY_TREE and set(state.dirty) == {"config.yaml"}
    (root / "README.md").write_text("x\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "no .vouch in this commit", "--", "README.md")
    state = freshness.current(kb)  # HEAD without .vouch: diff-index lists it as added
    assert state.tree == EMPTY_TREE and set(state.dirty) == {"config.yaml"}


@pytest.mark.parametrize(
    "text",
    [
        'a: 1\nb:\n  c: x\n  d: ""\n  e:\n    f: 2.5\ng:\n',
        "# only comments\n\n",
        "agent: ''\nsearch:\n  default_top: 20\n  coverage_cut: -0.5\n",
        "model: models/my-model_v1.2\n",
        "a: yes\n",
        "a: Off\n",
        "a: ~\n",
        "a: {}\n",
        "a: 'it''s'\n",
        "a: hello world\n",
        "search:\n  paths:\n    - a\n    - b\n",
    ],
)
def test_config_subset_reads_like_pyyaml(text: str) -> None:
    assert same(fastyaml.parse(text), yamlio.load_yaml(text))


@pytest.mark.parametrize(
    "text",
    [
        "a: 010\n",
        "a: 2026-01-01\n",
        "a: [1]\n",
        "a: x # comment\n",
        'a: "tab\\t"\n',
        "a: 1\na: 2\n",
        "- a\n",
        "  a: 1\n",
        "a: &x 1\n",
        "a:\tb\n",
        "\ufeffa: 1\n",
        "on: 1\n",
        "search:\n  No: 2\n",
        "a: 1_000\n",
        "a:\n- x\n",
    ],
)
def test_config_other_yaml_goes_to_pyyaml(text: str) -> None:
    assert fastyaml.parse(text) is None
    try:
        expected = yamlio.load_yaml(text, where="config.yaml")
    except CorruptFile:
        with pytest.raises(CorruptFile):
            config.parse(text, where="config.yaml")
    else:
        assert same(config.parse(text, where="config.yaml"), expected)


def test_the_shipped_template_takes_the_fast_path() -> None:
    text = config.template_text("config.yaml")
    assert same(fastyaml.parse(text), yamlio.load_yaml(text))


def test_a_cold_search_imports_only_what_it_needs(kb: KB) -> None:
    claim(kb, "Rollbacks use the ship tool")
    commit(kb)
    Index.open(kb).close()
    heavy = (
        "tokenizers",
        "model2vec",
        "hnswlib",
        "yaml",
        "frontmatter",
        "ruamel",
        "vouch.index.build",
        "vouch.index.ingest",
        "vouch.gate",
        "vouch.cli.gate",
        "vouch.servers",
        "git",
    )  # GitPython
    script = (
        "import sys, json\n"
        "from vouch.cli import main\n"
        f"code = main(['search', 'undo a deploy', '--kb', {str(kb.root)!r}])\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    code, modules = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and "numpy" in modules  # the vector search still ran
    loaded = [m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy)]
    assert loaded == []


def _vouch(*args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """The console script's way in (`vouch.launch.run`)."""
    return subprocess.run(
        [sys.executable, "-m", "vouch", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        check=False,
    )


def test_cold_processes_keep_output_exit_codes_and_writes(repo: Path) -> None:
    assert _vouch("init", cwd=repo).returncode == 0
    (repo / "notes.md").write_text("# Deploys\n\nDeploys need a green CI run.\n")
    added = _vouch("source", "add", "notes.md", cwd=repo)
    assert added.returncode == 0, added.stderr
    status = _vouch("status", "--json", cwd=repo)
    assert json.loads(status.stdout)["counts"]["sources"] == 1
    assert _vouch("audit", "--verify", cwd=repo).returncode == 0
    assert git(repo, "status", "--porcelain", "--", ".vouch").strip() == ""  # committed
    found = _vouch("search", "green CI", "--top", "50", cwd=repo)
    assert found.returncode == 0 and json.loads(found.stdout)["returned"] >= 1
    empty = _vouch("search", "   ", "--json", cwd=repo)
    assert empty.returncode == 1 and json.loads(empty.stdout)["error"]["code"] == "E004"


def test_counting_by_name_agrees_with_listing(kb: KB) -> None:
    from vouch.kinds import KINDS

    for n in range(12):
        claim(kb, f"Claim number {n} about deploys")
    shard = sorted(p for p in (kb.dir / "claims").iterdir() if p.is_dir())[0]
    (shard / ".half-written.yaml").write_text("x")  # a temp file is not an object
    (shard / "notes.txt").write_text("x")
    assert kb.count(KINDS["claim"]) == len(kb.ids(KINDS["claim"])) == 12
    assert kb.count(KINDS["source"]) == len(kb.ids(KINDS["source"])) == 0


def test_the_command_line_collects_cycles_rarely(monkeypatch: pytest.MonkeyPatch) -> None:
    """The console entry point raises the cycle collector's first threshold: a command's
    imports would otherwise be walked 20-50 times before it starts."""
    import gc

    before = gc.get_threshold()
    monkeypatch.setattr(sys, "argv", ["vouch", "--version"])
    try:
        assert launch.run() == 0
        assert gc.get_threshold() == (launch.GC_THRESHOLD, *before[1:])
    finally:
        gc.set_threshold(*before)
