"""Bundles (issue 13.4): export, export-check, import-check, import-apply.

Real repositories: an origin knowledge base with approved claims (one citing a span, so
evidence travels too), an entity, a page and a relation, plus a pending proposal; a
fresh `vouch init` repository to import into. Tampered bundles are built with tarfile
from a real export, and every refusal is checked to have written nothing.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from built_once import built_once
from conftest import _build_kb_with_sources, git
from gate_support import (
    ALICE,
    BOB,
    PERSON,
    a_source,
    call,
    propose_claim,
    proposed,
    vouch_forked,
    vouch_proc,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vouch import bundle
from vouch.index.api import Index
from vouch.servers import jsonl, server_context
from vouch.store.initkb import init_kb
from vouch.store.kb import KB

QUERIES = ("roll back a release", "deploys need CI", "billing service")
Members = list[tuple[tarfile.TarInfo, bytes]]


def approve(kb: KB, proposed: dict[str, Any]) -> str:
    assert proposed["valid"], proposed
    return str(
        call(kb, "kb.approve", {"proposal_id": proposed["proposal_id"]}, actor=BOB)["object_id"]
    )


def _fill(kb: KB) -> KB:
    """Approved claims, an entity, a page and a relation, and one pending proposal."""
    src = a_source(kb)
    claims = [
        approve(
            kb,
            proposed(
                kb, "kb.propose_claim", {"text": text, "evidence": [evidence], "tags": ["deploy"]}
            ),
        )
        for text, evidence in (
            ("Deploys need a green CI run", src),
            ("Roll back a bad release with ship rollback", f"{src}:L3-L4"),
            ("The billing service deploys on Tuesdays", src),
        )
    ]
    entity = approve(
        kb, proposed(kb, "kb.propose_entity", {"name": "Billing service", "type": "system"})
    )
    approve(
        kb,
        proposed(
            kb,
            "kb.propose_page",
            {
                "title": "Deploying billing",
                "claims": claims[:2],
                "body": "# Deploying billing\n\n## Rolling back\n\nUse ship rollback.\n",
            },
        ),
    )
    approve(
        kb,
        proposed(
            kb,
            "kb.propose_relation",
            {"source": entity, "relation": "references", "target": claims[0]},
        ),
    )
    propose_claim(kb, "A pending claim that no bundle may hold", actor=ALICE)
    return kb


def _build_origin(root: Path) -> None:
    _build_kb_with_sources(root)
    _fill(KB.open(root))


@pytest.fixture(scope="module")
def built_origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The origin knowledge base, built once a session (`built_once`); tests get copies."""
    return built_once(tmp_path_factory, "bundles-origin", _build_origin)[0]


@pytest.fixture
def origin(built_origin: Path, tmp_path: Path) -> KB:
    """A copy of the origin: the same clone to vouch (its .git/vouch state comes along),
    its search index built again here, as the origin's was (an index names its folder)."""

    def no_index(folder: str, names: list[str]) -> list[str]:
        return ["index"] if Path(folder).name == ".vouch" else []

    root = tmp_path / "repo"
    shutil.copytree(built_origin, root, symlinks=True, ignore=no_index)
    git(root, "update-index", "-q", "--refresh")  # new inodes: git's stat data catches up
    kb = KB.open(root)
    Index.open(kb).close()
    return kb


@pytest.fixture
def exported(origin: KB, tmp_path: Path, run_cli) -> Path:
    out = tmp_path / "kb.tar.gz"
    res = run_cli("export", "--out", str(out), "--kb", str(origin.dir))
    assert res.code == 0, res.err
    return out


def members(path: Path) -> Members:
    with tarfile.open(path, "r:gz") as tar:
        out = []
        for info in tar.getmembers():
            fh = tar.extractfile(info) if info.isreg() else None
            out.append((info, fh.read() if fh else b""))
        return out


def repack(path: Path, items: Members, *, fix_manifest: bool = False) -> Path:
    """Write `items` as a bundle at `path`; with `fix_manifest`, the manifest lists the
    regular members as they now are (a forger who also rewrote the manifest and its
    digest)."""
    if fix_manifest:
        files = [
            {"path": i.name, "sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)}
            for i, d in items
            if i.isreg() and i.name != "manifest.json"
        ]
        manifest = json.loads(dict((i.name, d) for i, d in items)["manifest.json"])
        manifest["files"] = sorted(files, key=lambda e: str(e["path"]))
        manifest["content_sha256"] = bundle.content_digest(manifest["files"])
        items = [
            (i, json.dumps(manifest).encode() if i.name == "manifest.json" else d) for i, d in items
        ]
    with tarfile.open(path, "w:gz") as tar:
        for info, data in items:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def state(kb: KB) -> tuple[str, str, bytes]:
    """HEAD, the work tree's status and the audit log: what a refusal must not change."""
    return (
        git(kb.root, "rev-parse", "HEAD"),
        git(kb.root, "status", "--porcelain", "--untracked-files=all"),
        (kb.dir / "audit.log.jsonl").read_bytes(),
    )


def ranked(run_cli, kb: KB, query: str) -> list[tuple[str, str, int]]:
    res = run_cli("search", query, "--json", "--kb", str(kb.dir))
    assert res.code == 0, res.err
    return [(r["kind"], r["id"], r["source"]["chunk_index"]) for r in res.json()["results"]]


# -- export ----------------------------------------------------------------------------------
def test_export_holds_the_committed_knowledge_and_nothing_else(
    origin: KB, exported: Path, tmp_path: Path, run_cli
) -> None:
    # uncommitted edits and a new untracked file in .vouch/ are not committed knowledge
    claim = next((origin.dir / "claims").rglob("*.yaml"))
    committed = claim.read_bytes()
    claim.write_bytes(committed + b"# a local edit\n")
    (origin.dir / "claims" / "zz").mkdir()
    (origin.dir / "claims" / "zz" / "stray.yaml").write_text("id: nope\n")
    again = tmp_path / "again.tar.gz"
    assert run_cli("export", "--out", str(again), "--kb", str(origin.dir)).code == 0
    assert again.read_bytes() == exported.read_bytes()  # deterministic, from git

    items = members(exported)
    names = [i.name for i, _ in items]
    assert names[0] == "manifest.json" and names[1:] == sorted(names[1:])
    assert {(i.uid, i.gid, i.uname, i.gname, i.mode) for i, _ in items} == {(0, 0, "", "", 0o644)}
    assert len({i.mtime for i, _ in items}) == 1
    assert gzip.decompress(exported.read_bytes())  # a plain gzip stream
    tops = {n.split("/")[0] for n in names}
    assert tops == {
        "manifest.json",
        "audit.log.jsonl",
        "claims",
        "decided",
        "entities",
        "evidence",
        "pages",
        "relations",
        "sources",
    }
    assert dict(items_by_name(items))[claim.relative_to(origin.dir).as_posix()] == committed
    assert not any(
        b"A pending claim" in d for i, d in items if not i.name.startswith(("audit", "manifest"))
    )
    manifest = json.loads(items[0][1])
    assert manifest["format"] == "vouch-bundle" and manifest["version"] == 1
    assert manifest["source_commit"] == git(origin.root, "rev-parse", "HEAD").strip()
    assert {e["path"] for e in manifest["files"]} == set(names[1:])

    report = run_cli("export-check", str(exported), "--json").json()
    assert report["ok"] and report["issues"] == [] and report["files"] == len(names) - 1


def test_export_writes_the_tar_tarfile_writes(exported: Path) -> None:
    """vouch writes the headers itself (for speed): byte for byte what tarfile writes
    for the same members, so any tar reader reads them."""
    items = members(exported)
    again = io.BytesIO()
    with tarfile.open(fileobj=again, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in items:
            tar.addfile(info, io.BytesIO(data))
    assert gzip.decompress(exported.read_bytes()) == again.getvalue()


def items_by_name(items: Members) -> list[tuple[str, bytes]]:
    return [(i.name, d) for i, d in items]


def test_export_refuses_a_branch_with_a_broken_knowledge_file(
    origin: KB, tmp_path: Path, run_cli
) -> None:
    claim = next(
        p for p in (origin.dir / "claims").rglob("*.yaml") if "Deploys need" in p.read_text()
    )
    claim.write_text(claim.read_text().replace("Deploys need", "Releases need"))
    git(origin.root, "commit", "-qam", "edit a claim by hand")
    out = tmp_path / "broken.tar.gz"
    res = run_cli("export", "--out", str(out), "--kb", str(origin.dir), "--json")
    assert res.code == 1 and res.json()["error"]["code"] == "E102"
    assert "hashes to" in res.out
    assert not out.exists()


def test_export_leaves_out_files_vouch_ignores(origin: KB, tmp_path: Path, run_cli) -> None:
    hostile = "claims/notes\nwrote /tmp/evil.tar.gz: 1 file.txt"  # a name with a newline
    for rel in ("claims/README.md", "claims/ab/.keep", "audit/notes.txt", hostile):
        (origin.dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (origin.dir / rel).write_text("not knowledge\n")
    git(origin.root, "add", "-f", ".vouch")
    git(origin.root, "commit", "-qm", "files vouch ignores")
    out = tmp_path / "kb.tar.gz"
    res = run_cli("export", "--out", str(out), "--kb", str(origin.dir))
    assert res.code == 0, res.err
    assert "left out claims/README.md" in res.out
    # a file name cannot add a line of its own to what people read
    assert "left out claims/notes\\nwrote /tmp/evil.tar.gz" in res.out
    assert not any(line.startswith("wrote /tmp/evil") for line in res.out.splitlines())
    names = {i.name for i, _ in members(out)}
    assert not names & {"claims/README.md", "claims/ab/.keep", "audit/notes.txt", hostile}
    assert run_cli("export-check", str(out)).code == 0


# -- round trip ------------------------------------------------------------------------------
def test_import_into_a_fresh_knowledge_base_searches_the_same(
    origin: KB, fresh: KB, exported: Path, run_cli
) -> None:
    before = {q: ranked(run_cli, origin, q) for q in QUERIES}
    assert all(before.values())

    plan = run_cli("import-check", str(exported), "--kb", str(fresh.dir), "--json").json()
    assert plan["conflict"] == [] and plan["identical"] == []
    # 3 sources, 3 claims, 1 evidence, an entity, a page, a relation, 6 decision records
    assert len(plan["new"]) == 16

    res = run_cli(
        "import-apply", str(exported), "--kb", str(fresh.dir), "--json", "--as", "Importer"
    )
    assert res.code == 0, res.err
    result = res.json()
    assert (result["imported"], result["skipped"], result["overwritten"]) == (16, 0, 0)
    sha = hashlib.sha256(exported.read_bytes()).hexdigest()
    assert result["bundle"] == sha

    assert {q: ranked(run_cli, fresh, q) for q in QUERIES} == before
    assert run_cli("audit", "--verify", "--kb", str(fresh.dir)).code == 0
    lint = run_cli("lint", "--kb", str(fresh.dir), "--json")
    assert lint.json()["errors"] == 0, lint.out

    # one commit, naming the bundle; one audit event naming it and the importer
    message = git(fresh.root, "log", "-1", "--format=%B")
    assert sha[:12] in message.splitlines()[0] and f"Vouch-Bundle: {sha}" in message
    # the importer is the git user; `--as Importer` is only a label beside them
    assert "Vouch-Event: bundle.import" in message and f"Vouch-Actor: {PERSON}" in message
    assert git(fresh.root, "status", "--porcelain") == ""
    events = call(fresh, "kb.audit", {"filter": {"event": "bundle.import"}})
    assert len(events) == 1 and events[0]["actor"] == PERSON
    assert events[0]["data"]["bundle_sha256"] == sha
    assert events[0]["data"]["importer"] == PERSON
    assert len(events[0]["object_ids"]) == 16
    # the origin's audit events stay in the bundle: this chain is this repository's
    assert [e["event"] for e in call(fresh, "kb.audit")] == ["kb.init", "bundle.import"]

    # importing again finds everything identical and commits nothing
    head = git(fresh.root, "rev-parse", "HEAD")
    again = run_cli("import-apply", str(exported), "--kb", str(fresh.dir), "--json").json()
    assert (again["imported"], again["identical"], again["commit"]) == (0, 16, None)
    assert git(fresh.root, "rev-parse", "HEAD") == head


def test_import_never_clobbers_uncommitted_work(
    origin: KB, fresh: KB, exported: Path, run_cli
) -> None:
    rel = next(i.name for i, _ in members(exported) if i.name.startswith("claims/"))
    (fresh.dir / rel).parent.mkdir(parents=True)
    (fresh.dir / rel).write_text("a person's unsaved draft\n")
    before = state(fresh)
    res = run_cli("import-apply", str(exported), "--kb", str(fresh.dir), "--json")
    assert res.code == 1 and res.json()["error"]["code"] == "E105", res.out
    assert state(fresh) == before
    assert (fresh.dir / rel).read_text() == "a person's unsaved draft\n"


@pytest.mark.parametrize("step", ["committed", "staged"])
def test_an_import_killed_midway_is_finished_by_the_next_write(
    fresh: KB, exported: Path, step: str
) -> None:
    head = git(fresh.root, "rev-parse", "HEAD")
    killed = vouch_forked(fresh.root, "import-apply", str(exported), env={"VOUCH_FAULT": step})
    assert killed.returncode == 86  # died on the spot, as if killed
    assert git(fresh.root, "rev-parse", "HEAD") == head
    again = vouch_proc(fresh.root, "import-apply", str(exported), "--json")
    assert again.returncode == 0, again.stderr
    message = git(fresh.root, "log", "-1", "--format=%B")
    assert "Vouch-Event: bundle.import" in message
    assert git(fresh.root, "status", "--porcelain") == ""
    assert vouch_proc(fresh.root, "audit", "--verify").returncode == 0
    assert len(call(fresh, "kb.list_claims")) == 3


def test_sha256_repositories_export_and_import(exported: Path, tmp_path: Path, run_cli) -> None:
    root = tmp_path / "sha256"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256")
    init_kb(root)
    kb = KB.open(root)
    assert run_cli("import-apply", str(exported), "--kb", str(kb.dir)).code == 0
    again = tmp_path / "from-sha256.tar.gz"
    assert run_cli("export", "--out", str(again), "--kb", str(kb.dir)).code == 0
    manifest = json.loads(members(again)[0][1])
    assert len(manifest["source_commit"]) == 64
    assert {e["path"] for e in manifest["files"]} - {"audit.log.jsonl"} == {
        e["path"] for e in json.loads(members(exported)[0][1])["files"]
    } - {"audit.log.jsonl"}
    assert run_cli("export-check", str(again)).code == 0


def test_import_is_searchable_in_the_same_process(origin: KB, fresh: KB, exported: Path) -> None:
    assert call(fresh, "kb.search", {"query": "ship rollback"}) == []
    call(fresh, "kb.import_apply", {"path": str(exported)})
    hits = call(fresh, "kb.search", {"query": "ship rollback"})
    assert any(h["kind"] == "claim" for h in hits)


# -- conflicts -------------------------------------------------------------------------------
@pytest.fixture
def conflicting(origin: KB, fresh: KB, exported: Path, tmp_path: Path, run_cli) -> tuple[Path, str]:
    """`fresh` holds the first export; the origin then confirmed a claim and exported
    again: same id, other content."""
    assert run_cli("import-apply", str(exported), "--kb", str(fresh.dir)).code == 0
    claim_id = call(origin, "kb.list_claims")[0]["id"]
    call(origin, "kb.confirm", {"id": claim_id})
    second = tmp_path / "second.tar.gz"
    assert run_cli("export", "--out", str(second), "--kb", str(origin.dir)).code == 0
    return second, claim_id


def test_import_check_names_new_conflicting_and_identical(
    fresh: KB, run_cli, conflicting: tuple[Path, str]
) -> None:
    second, claim_id = conflicting
    plan = run_cli("import-check", str(second), "--kb", str(fresh.dir), "--json").json()
    assert plan["conflict"] == [claim_id] and plan["new"] == []
    assert len(plan["identical"]) == 15
    human = run_cli("import-check", str(second), "--kb", str(fresh.dir))
    assert f"conflict: {claim_id}" in human.out and "0 new, 1 conflicting" in human.out


def test_on_conflict_skip_keeps_ours(fresh: KB, run_cli, conflicting: tuple[Path, str]) -> None:
    second, claim_id = conflicting
    ours = call(fresh, "kb.read_claim", {"id": claim_id})
    before = state(fresh)
    res = run_cli("import-apply", str(second), "--kb", str(fresh.dir), "--json").json()
    assert (res["imported"], res["skipped"], res["overwritten"]) == (0, 1, 0)
    assert res["commit"] is None and state(fresh) == before  # nothing new: no commit
    assert call(fresh, "kb.read_claim", {"id": claim_id}) == ours


def test_on_conflict_fail_refuses_and_writes_nothing(
    fresh: KB, run_cli, conflicting: tuple[Path, str]
) -> None:
    second, claim_id = conflicting
    before = state(fresh)
    res = run_cli(
        "import-apply", str(second), "--on-conflict", "fail", "--kb", str(fresh.dir), "--json"
    )
    assert res.code == 1 and res.json()["error"]["code"] == "E105"
    assert claim_id in res.json()["error"]["message"]
    assert state(fresh) == before


def test_on_conflict_overwrite_takes_the_bundles(
    origin: KB, fresh: KB, run_cli, conflicting: tuple[Path, str]
) -> None:
    second, claim_id = conflicting
    res = run_cli(
        "import-apply", str(second), "--on-conflict", "overwrite", "--kb", str(fresh.dir), "--json"
    ).json()
    assert (res["imported"], res["skipped"], res["overwritten"]) == (0, 0, 1)
    rel = next(p for p in (origin.dir / "claims").rglob(f"{claim_id}.yaml")).relative_to(origin.dir)
    assert (fresh.dir / rel).read_bytes() == (origin.dir / rel).read_bytes()
    assert call(fresh, "kb.read_claim", {"id": claim_id})["last_confirmed_at"]
    assert run_cli("audit", "--verify", "--kb", str(fresh.dir)).code == 0
    assert git(fresh.root, "status", "--porcelain") == ""


# -- tampering -------------------------------------------------------------------------------
def _claim(items: Members) -> int:
    return next(n for n, (i, _) in enumerate(items) if i.name.startswith("claims/"))


def _source_content(items: Members) -> int:
    return next(n for n, (i, _) in enumerate(items) if "/content" in i.name)


def _member(
    name: str, data: bytes = b"x", kind: bytes = tarfile.REGTYPE, link: str = ""
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info, data


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def _edit(items: Members, n: int, old: bytes, new: bytes) -> Members:
    info, data = items[n]
    assert old in data
    return [*items[:n], (info, data.replace(old, new, 1)), *items[n + 1 :]]


TAMPERING: dict[str, tuple[Callable[[Path, Members], object], str]] = {
    "a changed byte in the file": (lambda p, m: _flip_byte(p), r"not a vouch bundle"),
    "a changed byte in a member": (
        lambda p, m: repack(p, _edit(m, _claim(m), b"id:", b"Id:")),
        r"sha256 differs from the manifest",
    ),
    "an extra file": (
        lambda p, m: repack(p, [*m, _member("claims/ab/extra-thing-abababab.yaml")]),
        r"not in the manifest",
    ),
    "a ../ member": (
        lambda p, m: repack(p, [*m, _member("claims/../../escape.yaml")]),
        r"climbs out with '\.\.'",
    ),
    "an absolute path": (
        lambda p, m: repack(p, [*m, _member("/tmp/vouch-absolute.yaml")]),
        r"absolute path",
    ),
    "a symlink member": (
        lambda p, m: repack(
            p, [*m, _member("claims/ab/link-abababab.yaml", b"", tarfile.SYMTYPE, "/etc/passwd")]
        ),
        r"symbolic link.*not a regular file",
    ),
    "a hard link member": (
        lambda p, m: repack(
            p, [*m, _member("claims/ab/link-abababab.yaml", b"", tarfile.LNKTYPE, m[1][0].name)]
        ),
        r"hard link",
    ),
    "a device member": (
        lambda p, m: repack(p, [*m, _member("claims/ab/dev-abababab.yaml", b"", tarfile.CHRTYPE)]),
        r"a device",
    ),
    "a duplicate member": (lambda p, m: repack(p, [*m, m[_claim(m)]]), r"appears twice"),
    "a missing member": (
        lambda p, m: repack(p, [x for n, x in enumerate(m) if n != _claim(m)]),
        r"listed in the manifest but not in the bundle",
    ),
    "a file outside the layout": (
        lambda p, m: repack(p, [*m, _member("config.yaml", b"review: {}\n")], fix_manifest=True),
        r"outside the knowledge layout",
    ),
    "a .git member": (
        lambda p, m: repack(p, [*m, _member("claims/.GIT/config")], fix_manifest=True),
        r"\.git directory",
    ),
    "a forged claim, manifest rewritten": (
        lambda p, m: repack(p, _edit(m, _claim(m), b"text: ", b"text: Not "), fix_manifest=True),
        r"hashes to .*, not",
    ),
    "forged source bytes, manifest rewritten": (
        lambda p, m: repack(p, _edit(m, _source_content(m), b"#", b"!"), fix_manifest=True),
        r"do not hash to its id",
    ),
    "a manifest whose digest no longer matches": (
        lambda p, m: repack(p, _edit(m, 0, b'"bytes": ', b'"bytes": 1')),
        r"content_sha256 does not match|bytes, the manifest says",
    ),
    "bytes after the gzip stream": (
        lambda p, m: p.write_bytes(p.read_bytes() + b"\0\0garbage"),
        r"follow the gzip stream",
    ),
    "no manifest": (lambda p, m: repack(p, m[1:]), r"no manifest\.json"),
    "a newer format": (
        lambda p, m: repack(p, _edit(m, 0, b'"version": 1', b'"version": 2')),
        r"format version 2",
    ),
}


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_tampered_bundle_is_refused_and_nothing_is_written(
    how: str, exported: Path, fresh: KB, run_cli
) -> None:
    tamper, expected = TAMPERING[how]
    tamper(exported, members(exported))
    check = run_cli("export-check", str(exported), "--json")
    assert check.code == 1
    report = check.json()
    assert not report["ok"] and any(re.search(expected, i) for i in report["issues"]), report[
        "issues"
    ]
    human = run_cli("export-check", str(exported))
    assert human.code == 1 and "REFUSED" in human.out

    before = state(fresh)
    for verb in ("import-check", "import-apply"):
        res = run_cli(verb, str(exported), "--kb", str(fresh.dir), "--json")
        assert res.code == 1 and res.json()["error"]["code"] == "E102", res.out
    assert state(fresh) == before
    assert not (fresh.root.parent / "escape.yaml").exists()
    assert not Path("/tmp/vouch-absolute.yaml").exists()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    changes=st.lists(
        st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=3
    )
)
def test_any_changed_bytes_are_refused_or_change_no_file(
    exported: Path, tmp_path: Path, changes: list[tuple[int, int]]
) -> None:
    """The reader of untrusted bundles never crashes, and whatever passes holds exactly
    the exported files (a change in padding or an unused header field can pass)."""
    original = bundle.load(exported)
    data = bytearray(gzip.decompress(exported.read_bytes()))
    for where, value in changes:
        data[where % len(data)] = value
    path = tmp_path / "changed.tar.gz"
    path.write_bytes(gzip.compress(bytes(data)))
    found, report = bundle.check(path)
    assert (found is None) == (not report["ok"])
    if found is not None:
        assert found.files == original.files


def test_export_check_takes_several_files_and_fails_if_any_fails(
    exported: Path, tmp_path: Path, run_cli
) -> None:
    bad = repack(tmp_path / "bad.tar.gz", [*members(exported), _member("../x")])
    res = run_cli("export-check", str(exported), str(bad), "--json")
    assert res.code == 1
    assert [r["ok"] for r in res.json()] == [True, False]
    assert run_cli("export-check", str(exported), str(exported)).code == 0


def test_a_missing_bundle(fresh: KB, tmp_path: Path, run_cli) -> None:
    gone = str(tmp_path / "gone.tar.gz")
    res = run_cli("export-check", gone, "--json")
    assert res.code == 1 and "no such file" in res.json()["issues"][0]
    res = run_cli("import-apply", gone, "--kb", str(fresh.dir), "--json")
    assert res.code == 1 and res.json()["error"]["code"] == "E101"


def test_export_check_runs_as_a_hook_does(exported: Path, tmp_path: Path) -> None:
    """The installed entry point, outside any knowledge base, with filenames as
    arguments: what pre-commit runs on staged *.tar.gz files."""
    bad = repack(tmp_path / "bad.tar.gz", [*members(exported), _member("/etc/x")])
    entry = ("export-check", "--format", "human")  # .pre-commit-hooks.yaml
    ok = vouch_proc(tmp_path, *entry, exported.name)
    assert ok.returncode == 0, ok.stderr
    failed = vouch_proc(tmp_path, *entry, exported.name, bad.name)
    assert failed.returncode == 1 and "REFUSED" in failed.stdout


# -- agent transports ------------------------------------------------------------------------
def test_agents_may_check_but_never_apply(
    fresh: KB, exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOUCH_AGENT", "an-agent")
    inside = fresh.root / "incoming.tar.gz"
    inside.write_bytes(exported.read_bytes())
    (fresh.root / "notes.md").write_text("a person's file\n")
    before = state(fresh)
    for allow in (False, True):
        ctx = server_context("jsonl", kb_path=str(fresh.dir), allow_decisions=allow)

        def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
            line = json.dumps({"id": 1, "method": method, "params": params}).encode()
            return jsonl.handle_line(ctx, line)  # noqa: B023 - used at once

        checked = ask("kb.export_check", {"path": str(inside)})
        assert checked["ok"] and checked["result"]["ok"]
        plan = ask("kb.import_check", {"path": str(inside)})
        assert plan["ok"] and len(plan["result"]["new"]) == 16
        refused = ask("kb.import_apply", {"path": str(inside)})
        assert not refused["ok"] and refused["error"]["vouch_code"] == "E104"
        assert "person's decision" in refused["error"]["message"]
        outside = ask("kb.import_check", {"path": str(exported)})
        assert not outside["ok"] and outside["error"]["vouch_code"] == "E108"
        written = ask("kb.export", {"out": str(exported.parent / "agent.tar.gz")})
        assert not written["ok"] and written["error"]["vouch_code"] == "E108"
        clobber = ask("kb.export", {"out": str(fresh.root / "notes.md")})
        assert not clobber["ok"] and clobber["error"]["vouch_code"] == "E104"
    assert state(fresh)[0] == before[0] and state(fresh)[2] == before[2]
    assert not (exported.parent / "agent.tar.gz").exists()
    assert (fresh.root / "notes.md").read_text() == "a person's file\n"
    # inside the repository, to a new file in a folder that exists: an agent may export
    (fresh.root / "out").mkdir()
    made = ask("kb.export", {"out": str(fresh.root / "out" / "agent.tar.gz")})
    assert made["ok"] and (fresh.root / "out" / "agent.tar.gz").is_file()


def test_the_checks_on_every_core_find_what_one_finds_in_the_same_order(exported: Path) -> None:
    """A big bundle's per-file checks run in forked workers (`parallel.map_slices`); here
    forced from 2 files: the same problems, in the same order, as one process finds —
    a forged claim, a stray path, forged source bytes, a broken audit chain."""
    from vouch.bundle.content import knowledge_problems

    found, _ = bundle.check(exported)
    assert found is not None
    files = dict(found.files)
    claim = next(r for r in files if r.startswith("claims/"))
    files[claim] = files[claim].replace(b"text: ", b"text: Not ", 1)
    content = next(r for r in files if r.startswith("sources/") and not r.endswith("meta.yaml"))
    files[content] = files[content] + b"!"
    files["claims/zz/not-a-claim.txt"] = b"x"
    log = next(r for r in files if r.startswith("audit"))
    files[log] = b"\n".join(files[log].splitlines()[1:]) + b"\n"
    serial = knowledge_problems(files, least=10**9)
    assert len(serial) >= 4
    assert knowledge_problems(files, least=2) == serial
