"""The benchmark generator writes knowledge bases that vouch itself reads as valid."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import git

from vouch.kinds import BY_PLURAL, source
from vouch.store import audit
from vouch.store.kb import KB

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_generate", BENCH / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    return _load_generator()


@pytest.fixture(scope="module")
def generated(generator: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generator.generate(tmp_path_factory.mktemp("gen") / "kb", 50, seed=3)


def test_status_counts_match_what_was_generated(
    generated: Path, generator: ModuleType, run_cli
) -> None:
    result = run_cli("status", "--json", cwd=generated)
    assert result.code == 0, result.err
    counts = result.json()["counts"]
    made = generator.marker(generated)["counts"]
    assert counts == {k: made[k] for k in counts}
    assert counts["claims"] == 50
    assert all(counts[k] > 0 for k in ("pages", "sources", "entities", "relations", "evidence"))


def test_every_file_loads_validates_and_redumps_identically(generated: Path) -> None:
    """The fast emitter must write exactly what the kinds' dump() would."""
    kb = KB.open(generated)
    for plural in ("claims", "pages", "entities", "relations", "evidence", "sources"):
        kind = BY_PLURAL[plural]
        for object_id in kb.ids(kind):
            rel = source.path_for(object_id) if plural == "sources" else kind.path_for(object_id)
            text = (kb.dir / rel).read_text(encoding="utf-8")
            obj = kind.load(text, where=rel)
            assert obj["id"] == object_id
            assert kind.dump(obj) == text, rel
            if plural == "sources":
                content = kb.source_content(object_id)
                assert (
                    content is not None
                    and source.new(
                        content,
                        **{k: v for k, v in obj.items() if k not in ("id", "hash", "byte_size")},
                    )["id"]
                    == object_id
                )
            elif plural in ("claims", "entities", "pages", "evidence"):
                assert kind.make_id(obj) == object_id  # content addressing holds


def test_references_resolve(generated: Path) -> None:
    kb = KB.open(generated)
    existing = {
        plural: set(kb.ids(BY_PLURAL[plural]))
        for plural in ("claims", "entities", "sources", "evidence")
    }
    cited = existing["sources"] | existing["evidence"]
    for c in kb.iter_objects(BY_PLURAL["claims"]):
        assert c["evidence"] and set(c["evidence"]) <= cited
        assert set(c["entities"]) <= existing["entities"]
        for other in (*c["supersedes"], *c["contradicts"], c.get("superseded_by") or c["id"]):
            assert other in existing["claims"]
    for p in kb.iter_objects(BY_PLURAL["pages"]):
        assert p["claims"] and set(p["claims"]) <= existing["claims"]
    for r in kb.iter_objects(BY_PLURAL["relations"]):
        assert {r["source"], r["target"]} <= existing["entities"]


def test_one_clean_commit_and_a_valid_audit_chain(generated: Path) -> None:
    assert git(generated, "status", "--porcelain") == ""
    subjects = git(generated, "log", "--format=%s").splitlines()
    assert subjects == ["vouch: import 50 generated claims", "vouch: initialise knowledge base"]
    events = list(audit.read_events(generated / ".vouch"))
    assert [e["event"] for e in events] == ["kb.init", "kb.import"]
    assert events[1]["prev_hash"] == events[0]["hash"]
    assert all(audit.event_hash(e) == e["hash"] for e in events)


def test_list_claims_works(generated: Path, run_cli) -> None:
    result = run_cli("list", "claims", "--json", "--limit", "5", cwd=generated)
    assert result.code == 0, result.err
    rows = result.json()["items"]
    assert len(rows) == 5 and all(r["text"] and r["evidence"] for r in rows)
    filtered = run_cli("list", "claims", "--json", "--filter", "type=warning", cwd=generated)
    assert filtered.code == 0 and all(r["type"] == "warning" for r in filtered.json()["items"])
    # for people: each claim's id, type, status and text, one a line
    shown = run_cli("list", "claims", "--limit", "5", cwd=generated).out.splitlines()
    assert [line.split()[:3] for line in shown] == [[r["id"], r["type"], r["status"]] for r in rows]


def test_deterministic_for_a_seed_and_varied_across_seeds(
    generator: ModuleType, generated: Path, tmp_path: Path
) -> None:
    again = generator.generate(tmp_path / "again", 50, seed=3)
    other = generator.generate(tmp_path / "other", 50, seed=4)
    tree = lambda p: git(p, "rev-parse", "HEAD^{tree}").strip()  # noqa: E731
    assert tree(again) == tree(generated)
    assert tree(other) != tree(generated)


def test_refuses_to_overwrite_and_caches(generator: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    with pytest.raises(FileExistsError):
        generator.generate(tmp_path / "busy", 10)
    first = generator.ensure(20, out_dir=tmp_path / "cache")
    head = generator.marker(first)["head"]
    (first / "scratch").write_text("left by a benchmark")
    git(first, "branch", "vouch/proposal/20250101-000000-abcdef12")
    assert generator.ensure(20, out_dir=tmp_path / "cache") == first  # reused, not rebuilt
    generator.restore(first)
    assert not (first / "scratch").exists()
    assert git(first, "branch", "--list", "vouch/*") == ""
    assert git(first, "rev-parse", "HEAD").strip() == head
    marker = json.loads((first / ".git" / generator.MARKER).read_text())
    assert marker["version"] == generator.GENERATOR_VERSION


def test_concurrent_ensure_generates_once(tmp_path: Path) -> None:
    """Benchmarks run side by side; two asking for the same size get one good copy."""
    import subprocess

    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import generate; from pathlib import "
        "Path; print(generate.ensure(30, out_dir=Path(sys.argv[2])))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(BENCH), str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    roots = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert roots == {str(tmp_path / "kb-30")}
    assert git(tmp_path / "kb-30", "status", "--porcelain") == ""
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".kb-30.lock")) == [
        "kb-30"
    ]
