"""Bundles holding hostile objects: knowledge made of hostile text travels byte for byte,
and bundles that are valid file by file but not as knowledge are refused with nothing
written.

One origin knowledge base (built once for the module) holds hostile text everywhere the
writers take it — NEL, U+2028/2029, BOMs, CRLF, `---` lines in page bodies, YAML-looking
values, 5k-column lines with double spaces, control characters, very long tags, a claim
with many citations, relations between hostile-named entities, a session with a
transcript of odd turns. Its export is imported into fresh repositories; hand-edited
copies (objects dropped, decisions forged, ids that lie) must be refused before
anything is written.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest
from built_once import built_once
from conftest import git
from gate_support import ALICE, BOB, call, propose_claim
from gate_support import proposed as propose_shown

from vouch import bundle
from vouch.bundle.reading import Limits
from vouch.kinds import KINDS
from vouch.store.initkb import init_kb
from vouch.store.kb import KB

HOSTILE = (
    "next\u0085line",
    "line\u2028separator\u2029paragraph",
    "\ufeffa byte order mark",
    "crlf\r\nline",
    "yes",
    "0x1",
    "1e3",
    "~",
    "2024-01-01",
    "null",
    "--- a document marker",
    "- a list item",
    "key: value",
    "# a comment",
    "&anchor *alias !!python/object:os.system",
    "'single' \"double\" `tick` \\ back",
    "control \x01\x07\x1b[31m\x7f characters",
    "tab\there and trailing space ",
    "\u00a0no-break\u00a0 zero\u200bwidth \u202eright-to-left",
    "emoji \U0001f680 and ünïcödé",
    "x" + "  double  spaces" * 320,  # a 5k-column line
)
Members = list[tuple[str, bytes]]


def _approve(kb: KB, proposed: dict[str, Any]) -> str:
    assert proposed["valid"], proposed
    return str(
        call(kb, "kb.approve", {"proposal_id": proposed["proposal_id"]}, actor=BOB)["object_id"]
    )


def _build(root: Path) -> KB:
    init_kb(root)
    kb = KB.open(root)
    docs = root / "docs"
    docs.mkdir()
    sources = []
    for n, text in enumerate(HOSTILE):
        (docs / f"s{n}.txt").write_bytes(text.encode() + b"\n")
        found = call(
            kb, "kb.register_source_from_path", {"path": f"docs/s{n}.txt", "title": text[:200]}
        )
        sources.append(found["id"])
    entities = []
    for n, text in enumerate(HOSTILE):
        claim = _approve(
            kb,
            propose_shown(
                kb,
                "kb.propose_claim",
                {"text": f"c {text}", "evidence": [f"{sources[n]}:L1-L1"], "tags": [text[:300]]},
            ),
        )
        entities.append(
            _approve(
                kb, propose_shown(kb, "kb.propose_entity", {"name": f"e {text}", "type": "concept"})
            )
        )
        body = f"# Head\n\n{text}\n---\n{text}\r\n\n## Next\n\n---\n\n{text}\n"
        _approve(
            kb,
            propose_shown(
                kb,
                "kb.propose_page",
                {"title": f"p {text[:100]}", "body": body, "claims": [claim]},
            ),
        )
    for a, b in itertools.pairwise(entities):
        _approve(
            kb,
            propose_shown(
                kb, "kb.propose_relation", {"source": a, "relation": "uses", "target": b}
            ),
        )
    _approve(
        kb,
        propose_shown(
            kb,
            "kb.propose_claim",
            {"text": "Cites many sources", "evidence": sources, "tags": ["t" * 4000]},
        ),
    )
    session = call(kb, "kb.session_start", {"task": "task\u2028yes ~ 2024-01-01"})["session_id"]
    turns = [
        {"type": "user", "message": {"role": "user", "content": "hi\u2028there\u0085 yes"}},
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "---\n~\n"}]},
        },
        {"type": "odd", "x": 1},
        {"type": "user", "message": {"role": "user", "content": "y  " * 2000}},
    ]
    (root / "chat.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    transcript = call(
        kb, "kb.register_source_from_path", {"path": "chat.jsonl", "type": "transcript"}
    )["id"]
    proposed = propose_shown(
        kb,
        "kb.propose_claim",
        {"text": "A turn says hi", "evidence": [f"{transcript}:T1"], "session_id": session},
    )
    _approve(kb, proposed)
    call(kb, "kb.session_end", {"session_id": session, "transcript": transcript})
    return kb


def _build_and_export(root: Path) -> None:
    bundle.export(_build(root), root.parent / "hostile.tar.gz")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the origin's .vouch/, its export): built once a session; tests copy, never change
    them."""
    root, _ = built_once(tmp_path_factory, "bundles-hostile", _build_and_export)
    return root / ".vouch", root.parent / "hostile.tar.gz"


@pytest.fixture
def exported(hostile: tuple[Path, Path], tmp_path: Path) -> Path:
    return Path(shutil.copy(hostile[1], tmp_path / "hostile.tar.gz"))


def members(path: Path) -> Members:
    with tarfile.open(path, "r:gz") as tar:
        return [(i.name, tar.extractfile(i).read()) for i in tar.getmembers()]  # type: ignore[union-attr]


def repack(path: Path, items: Members) -> Path:
    """`items` as a bundle whose manifest lists them exactly (a forger who also rewrote
    the manifest and its digest)."""
    manifest = json.loads(dict(items)["manifest.json"])
    manifest["files"] = sorted(
        (
            {"path": name, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
            for name, data in items
            if name != "manifest.json"
        ),
        key=lambda e: str(e["path"]),
    )
    manifest["content_sha256"] = bundle.content_digest(manifest["files"])
    with tarfile.open(path, "w:gz") as tar:
        for name, data in items:
            if name == "manifest.json":
                data = json.dumps(manifest).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def state(kb: KB) -> tuple[str, str, str, bytes]:
    """HEAD, branches, the work tree's status and the audit log: what a refusal keeps."""
    return (
        git(kb.root, "rev-parse", "HEAD"),
        git(kb.root, "for-each-ref"),
        git(kb.root, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        (kb.dir / "audit.log.jsonl").read_bytes(),
    )


def refused(run_cli, kb: KB, path: Path, expected: str) -> None:
    before = state(kb)
    for verb in ("import-check", "import-apply"):
        res = run_cli(verb, str(path), "--kb", str(kb.dir), "--json")
        assert res.code == 1 and "Traceback" not in res.err, (verb, res.out, res.err)
        error = res.json()["error"]
        assert error["code"] == "E102" and expected in error["message"], error
        assert "nothing was written" in error["message"]
    assert state(kb) == before


def clean(run_cli, kb: KB) -> None:
    lint = run_cli("lint", "--kb", str(kb.dir), "--json")
    assert lint.code == 0 and lint.json()["errors"] == 0, lint.out
    assert run_cli("audit", "--verify", "--kb", str(kb.dir)).code == 0
    doctor = run_cli("doctor", "--kb", str(kb.dir), "--json")
    assert doctor.json()["errors"] == 0, doctor.out
    assert git(kb.root, "status", "--porcelain", "--untracked-files=all") == ""


# -- hostile text travels byte for byte ------------------------------------------------------
def test_hostile_text_arrives_byte_identical_with_the_same_ids(
    hostile: tuple[Path, Path], exported: Path, fresh: KB, tmp_path: Path, run_cli
) -> None:
    origin, _ = hostile
    files = dict(members(exported))
    kinds = {name.split("/")[0] for name in files}
    assert {"claims", "entities", "pages", "relations", "sessions", "evidence"} <= kinds
    res = run_cli("import-apply", str(exported), "--kb", str(fresh.dir), "--json")
    assert res.code == 0, res.err
    for name, data in files.items():
        if name not in ("manifest.json", "audit.log.jsonl"):
            assert (fresh.dir / name).read_bytes() == data == (origin / name).read_bytes(), name
    for kind in ("claim", "entity", "page", "relation"):
        ours = {o["id"] for o in call(fresh, f"kb.list_{KINDS[kind].plural}", {"limit": 0})}
        theirs = {
            name.rsplit("/", 1)[1].rsplit(".", 1)[0]
            for name in files
            if name.startswith(KINDS[kind].directory + "/")
        }
        assert ours == theirs and ours, kind
    clean(run_cli, fresh)
    # exported again, the knowledge is the same file for file
    again = tmp_path / "again.tar.gz"
    assert run_cli("export", "--out", str(again), "--kb", str(fresh.dir)).code == 0
    second = dict(members(again))
    assert {n: d for n, d in second.items() if n not in ("manifest.json", "audit.log.jsonl")} == {
        n: d for n, d in files.items() if n not in ("manifest.json", "audit.log.jsonl")
    }


def test_an_imported_decision_shows_without_its_commit(exported: Path, fresh: KB, run_cli) -> None:
    """A decision record names the proposal commit of the repository it was made in,
    which is not here: `vouch show` used to fail on it with a git error (E202, exit 2)."""
    assert run_cli("import-apply", str(exported), "--kb", str(fresh.dir)).code == 0
    decided = sorted((fresh.dir / "decided").rglob("*.yaml"))
    assert decided
    for path in decided[:5]:
        pid = path.stem
        res = run_cli("show", pid, "--kb", str(fresh.dir), "--json")
        assert res.code == 0, res.err
        shown = res.json()
        assert (shown["state"], shown["diff"]) == ("approved", "")
        assert shown["decision"]["proposal_id"] == pid


# -- valid files, broken knowledge -----------------------------------------------------------
def _without(items: Members, *prefixes: str) -> Members:
    return [(n, d) for n, d in items if not n.startswith(prefixes)]


@pytest.mark.parametrize(
    ("dropped", "expected"),
    [
        (("evidence/",), "names evidence"),
        (("sources/",), "names source"),
        (("entities/",), "names object"),
        (("claims/",), "names claim"),
    ],
)
def test_a_bundle_missing_what_its_objects_cite_is_refused(
    exported: Path, fresh: KB, run_cli, dropped: tuple[str, ...], expected: str
) -> None:
    """Each file is valid on its own; the claims cite evidence (or sources) the bundle
    left out, the pages and relations name claims and entities that are not there."""
    part = repack(exported, _without(members(exported), *dropped))
    assert run_cli("export-check", str(part)).code == 0  # valid file by file
    refused(run_cli, fresh, part, expected)


def _forge(kind: str, data: dict[str, Any]) -> tuple[str, bytes]:
    made = KINDS[kind].normalize(data)
    made["id"] = KINDS[kind].make_id(made)
    return KINDS[kind].path_for(made["id"]), KINDS[kind].dump(made).encode()


def _claim(items: Members, text: str, evidence: list[str] | None = None) -> tuple[str, bytes]:
    source = next(n.split("/")[2] for n, _ in items if n.endswith("/meta.yaml"))
    stamp = "2024-01-01T00:00:00Z"
    return _forge(
        "claim",
        {
            "text": text,
            "evidence": evidence or [source],
            "status": "stable",
            "created_at": stamp,
            "updated_at": stamp,
            "approved_by": BOB,
        },
    )


def test_knowledge_without_a_decision_record_is_refused(exported: Path, fresh: KB, run_cli) -> None:
    """A claim valid and content-addressed, "approved_by" filled in, but no decision
    record names it: it never went through review."""
    items = members(exported)
    forged = repack(exported, [*items, _claim(items, "Nobody reviewed this claim")])
    assert run_cli("export-check", str(forged)).code == 0
    refused(run_cli, fresh, forged, "no approved decision record")


def _record(pid: str, object_id: str, proposer: str, decided_by: str, decision: str) -> bytes:
    return (
        f"proposal_id: {pid}\ndecision: {decision}\nkind: claim\nobject_id: {object_id}\n"
        f"proposer: {proposer}\ndecided_by: {decided_by}\n"
        "decided_at: '2024-01-01T00:00:00Z'\n"
    ).encode()


@pytest.mark.parametrize(
    ("proposer", "decision", "expected"),
    [
        (BOB, "approved", "approved their own proposal"),
        (ALICE, "rejected", "no approved decision record"),
    ],
)
def test_a_forged_decision_record_does_not_make_knowledge_approved(
    exported: Path, fresh: KB, run_cli, proposer: str, decision: str, expected: str
) -> None:
    items = members(exported)
    rel, data = _claim(items, "A claim its own proposer approved")
    object_id = rel.rsplit("/", 1)[1].removesuffix(".yaml")
    pid = "20240101-000000-0badc0de"
    record = (f"decided/{pid[-8:-6]}/{pid}.yaml", _record(pid, object_id, proposer, BOB, decision))
    forged = repack(exported, [*items, (rel, data), record])
    assert run_cli("export-check", str(forged)).code == 0
    refused(run_cli, fresh, forged, expected)


@pytest.mark.parametrize(
    ("locator", "quote", "expected"),
    [
        ("L1-L1", "words the source never said", "does not appear"),
        ("L500-L900", None, "lies outside source"),
        ("T2", None, "not a transcript"),
    ],
)
def test_evidence_that_misquotes_its_source_is_refused(
    exported: Path,
    fresh: KB,
    run_cli,
    locator: str,
    quote: str | None,
    expected: str,
) -> None:
    """Evidence says what a source says at a span; a forged one puts words in its mouth,
    points past its end, or names turns of a file that is not a transcript. The claim
    citing it has a proper decision record, so only the evidence is wrong."""
    items = members(exported)
    meta = next(n for n, _ in items if n.endswith("/meta.yaml") and b"type: file" in dict(items)[n])
    sid = meta.split("/")[2]
    content = next(d for n, d in items if n.startswith(meta.removesuffix("meta.yaml") + "content"))
    span = content.decode().split("\n")[0]
    rel, data = _forge(
        "evidence",
        {
            "source_id": sid,
            "locator": locator,
            "quote": quote,
            "hash": "sha256:" + hashlib.sha256(span.encode()).hexdigest(),
            "created_at": "2024-01-01T00:00:00Z",
        },
    )
    evidence_id = rel.rsplit("/", 1)[1].removesuffix(".yaml")
    claim_rel, claim = _claim(items, "A claim resting on forged evidence", [evidence_id])
    claim_id = claim_rel.rsplit("/", 1)[1].removesuffix(".yaml")
    pid = "20240101-000000-0badc0de"
    record = (f"decided/{pid[-8:-6]}/{pid}.yaml", _record(pid, claim_id, ALICE, BOB, "approved"))
    forged = repack(exported, [*items, (rel, data), (claim_rel, claim), record])
    assert run_cli("export-check", str(forged)).code == 0
    refused(run_cli, fresh, forged, expected)


def _decided_claims(items: Members, links: dict[str, dict[str, Any]]) -> Members:
    """Claims (text -> their link fields), each with an approved decision record."""
    ids = {text: _claim(items, text)[0].rsplit("/", 1)[1].removesuffix(".yaml") for text in links}
    out: Members = []
    for n, (text, fields) in enumerate(links.items()):
        resolved = {
            k: ([ids[t] for t in v] if isinstance(v, list) else ids[v]) for k, v in fields.items()
        }
        source = next(n.split("/")[2] for n, _ in items if n.endswith("/meta.yaml"))
        stamp = "2024-01-01T00:00:00Z"
        rel, data = _forge(
            "claim",
            {
                "text": text,
                "evidence": [source],
                "created_at": stamp,
                "updated_at": stamp,
                **resolved,
            },
        )
        pid = f"20240101-00000{n}-0badc0d{n}"
        record = _record(pid, ids[text], ALICE, BOB, "approved")
        out += [(rel, data), (f"decided/{pid[-8:-6]}/{pid}.yaml", record)]
    return out


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        (
            {
                "Older claim": {"supersedes": ["Newer claim"], "superseded_by": "Newer claim"},
                "Newer claim": {"supersedes": ["Older claim"], "superseded_by": "Older claim"},
            },
            "runs in a circle",
        ),
        ({"One side": {"contradicts": ["Other side"]}, "Other side": {}}, "contradicts"),
    ],
)
def test_claims_whose_links_break_the_rules_are_refused(
    exported: Path, fresh: KB, run_cli, links: dict[str, dict[str, Any]], expected: str
) -> None:
    items = members(exported)
    forged = repack(exported, [*items, *_decided_claims(items, links)])
    assert run_cli("export-check", str(forged)).code == 0
    refused(run_cli, fresh, forged, expected)


def test_a_source_with_two_content_files_is_refused_or_lands_clean(
    exported: Path, fresh: KB, run_cli
) -> None:
    """Both files hash to the source's id; whichever vouch reads, it reads the same."""
    items = members(exported)
    rel, data = next((n, d) for n, d in items if n.endswith("/content.txt"))
    forged = repack(exported, [*items, (rel.removesuffix(".txt"), data)])
    res = run_cli("import-apply", str(forged), "--kb", str(fresh.dir), "--json")
    if res.code == 0:
        clean(run_cli, fresh)
    else:
        assert res.code == 1 and res.json()["error"]["code"] == "E102", res.out


@pytest.mark.parametrize("ours", ["open", "rejected"])
def test_a_bundle_never_decides_a_proposal_of_this_repository(
    hostile: tuple[Path, Path], tmp_path: Path, run_cli, ours: str
) -> None:
    """A record named after a proposal pending here would hide it from `vouch pending`
    and make `vouch approve` refuse it as already decided; one overwriting the record of
    a proposal rejected here would turn the rejection into an approval."""
    root = tmp_path / "target"
    root.mkdir()
    git(root, "init", "-q")
    kb = _target_with_a_source(root)
    pid = propose_claim(kb, "A proposal waiting for review here")
    if ours == "rejected":
        call(kb, "kb.reject", {"proposal_id": pid, "reason": "not true here"}, actor=BOB)
    items = members(hostile[1])
    rel, data = next((n, d) for n, d in items if n.startswith("decided/"))
    theirs = rel.rsplit("/", 1)[1].removesuffix(".yaml")
    forged = repack(
        tmp_path / "forged.tar.gz",
        [
            *[(n, d) for n, d in items if n != rel],
            (f"decided/{pid[-8:-6]}/{pid}.yaml", data.replace(theirs.encode(), pid.encode())),
        ],
    )
    assert run_cli("export-check", str(forged)).code == 0
    if ours == "rejected":  # its record here conflicts: kept, the bundle's claim has none
        refused(run_cli, kb, forged, "no approved decision record")
        before = state(kb)
        res = run_cli(
            "import-apply", str(forged), "--on-conflict", "overwrite", "--kb", str(kb.dir), "--json"
        )
        assert res.code == 1 and f"{pid}, which is rejected here" in res.json()["error"]["message"]
        assert state(kb) == before
    else:
        refused(run_cli, kb, forged, f"decides proposal {pid}, which is open here")
        assert [p["proposal_id"] for p in call(kb, "kb.list_pending")] == [pid]
        assert call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)["ok"]


def _target_with_a_source(root: Path) -> KB:
    init_kb(root)
    kb = KB.open(root)
    (root / "doc.txt").write_text("Deploys need a green CI run.\n")
    call(kb, "kb.register_source_from_path", {"path": "doc.txt", "title": "deploy-runbook.md"})
    return kb


# -- hand-edited bundles ---------------------------------------------------------------------
def _edited(items: Members, prefix: str, old: bytes, new: bytes) -> Members:
    n = next(i for i, (name, data) in enumerate(items) if name.startswith(prefix) and old in data)
    name, data = items[n]
    return [*items[:n], (name, data.replace(old, new, 1)), *items[n + 1 :]]


def _tar(path: Path, items: Members) -> Path:
    """`items` exactly as given: the manifest is not rewritten."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in items:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _manifest_edit(items: Members, change: Any) -> Members:
    manifest = json.loads(items[0][1])
    change(manifest)
    return [("manifest.json", json.dumps(manifest).encode()), *items[1:]]


def _drop_entry(manifest: dict[str, Any]) -> None:
    manifest["files"] = manifest["files"][1:]
    manifest["content_sha256"] = bundle.content_digest(manifest["files"])


def _bad_hash(manifest: dict[str, Any]) -> None:
    manifest["files"][2]["sha256"] = "0" * 64
    manifest["content_sha256"] = bundle.content_digest(manifest["files"])


def _extra_entry(manifest: dict[str, Any]) -> None:
    manifest["files"].append(
        {"path": "claims/ab/ghost-abababab.yaml", "sha256": "0" * 64, "bytes": 1}
    )
    manifest["files"].sort(key=lambda e: e["path"])
    manifest["content_sha256"] = bundle.content_digest(manifest["files"])


# how: (the edit, whether the forger also rewrote the manifest, what the refusal says)
EDITS: dict[str, tuple[Any, bool, str]] = {
    "an id that is not its content": (
        lambda m: _edited(m, "claims/", b"text: c ", b"text: C "),
        True,
        "hashes to",
    ),
    "an id field that is not its path": (
        lambda m: _edited(m, "entities/", b"id: e-", b"id: f-"),
        True,
        "its path names",
    ),
    "a ../ path": (lambda m: [*m, ("claims/../../escape-abababab.yaml", b"x")], True, "climbs out"),
    "a .git/ path": (lambda m: [*m, (".git/hooks/post-commit", b"x")], True, ".git"),
    "a .git/ path inside a knowledge directory": (
        lambda m: [*m, ("claims/.git/config", b"x")],
        True,
        ".git",
    ),
    "a duplicate object with other bytes": (
        lambda m: [*m, (m[3][0], m[3][1] + b"# more\n")],
        False,
        "appears twice",
    ),
    "a manifest that lists one file too few": (
        lambda m: _manifest_edit(m, _drop_entry),
        False,
        "not in the manifest",
    ),
    "a manifest that lists a file the bundle lacks": (
        lambda m: _manifest_edit(m, _extra_entry),
        False,
        "listed in the manifest but not in the bundle",
    ),
    "a manifest that lies about a hash": (
        lambda m: _manifest_edit(m, _bad_hash),
        False,
        "sha256 differs",
    ),
    "a manifest whose digest lies": (
        lambda m: _manifest_edit(m, lambda d: d.update(content_sha256="0" * 64)),
        False,
        "content_sha256 does not match",
    ),
}


@pytest.mark.parametrize("how", sorted(EDITS))
def test_a_hand_edited_bundle_is_refused_before_anything_is_written(
    exported: Path, fresh: KB, run_cli, how: str
) -> None:
    edit, rewrite_manifest, expected = EDITS[how]
    (repack if rewrite_manifest else _tar)(exported, edit(members(exported)))
    check = run_cli("export-check", str(exported), "--json")
    assert check.code == 1 and any(expected in i for i in check.json()["issues"]), check.out
    refused(run_cli, fresh, exported, expected)
    assert not (fresh.root.parent / "escape-abababab.yaml").exists()


# -- killed mid-apply ------------------------------------------------------------------------
def _importer(root: Path, exported: Path, fault: str = "") -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(bundle.__file__).parents[2])}
    if fault:
        env["VOUCH_FAULT"] = fault
    return subprocess.Popen(
        [sys.executable, "-m", "vouch", "import-apply", str(exported)],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _target(tmp_path: Path, name: str) -> KB:
    root = tmp_path / name
    root.mkdir()
    git(root, "init", "-q")
    init_kb(root)
    return KB.open(root)


def test_an_import_killed_at_any_moment_leaves_all_or_nothing(
    exported: Path, tmp_path: Path, run_cli
) -> None:
    """SIGKILL at moments spread over a real `vouch import-apply`, then an ordinary
    `git commit -a` and the next vouch command: the branch holds the whole import or
    none of it, never a part, and the import then lands whole."""
    files = {f".vouch/{n}" for n, _ in members(exported)} - {
        ".vouch/manifest.json",
        ".vouch/audit.log.jsonl",
    }
    started = time.monotonic()
    assert _importer(_target(tmp_path, "measured").root, exported).wait() == 0
    took = time.monotonic() - started
    for n in range(1, 9):
        kb = _target(tmp_path, f"killed{n}")
        proc = _importer(kb.root, exported)
        time.sleep(took * n / 9)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        subprocess.run(["git", "commit", "-qam", "my work"], cwd=kb.root, capture_output=True)
        tree = set(git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", ".vouch").split())
        assert files & tree in (set(), files), (n, len(files & tree))
        res = run_cli("import-apply", str(exported), "--kb", str(kb.dir), "--json")
        assert res.code == 0, (n, res.err)
        tree = set(git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", ".vouch").split())
        assert files <= tree, n


def test_an_import_killed_after_its_index_write_then_commit_a_takes_it_whole(
    exported: Path, tmp_path: Path, run_cli
) -> None:
    """The window the test above hit on a loaded machine (7 of 9, 152 files of the
    import committed without the rest): killed between the index write and the renames,
    then `git commit -a`. The new files — objects and records — are in place before the
    index names them, so the commit takes every one; the audit lines follow on the next
    write."""
    files = {f".vouch/{n}" for n, _ in members(exported)} - {
        ".vouch/manifest.json",
        ".vouch/audit.log.jsonl",
    }
    kb = _target(tmp_path, "killed-at-index")
    assert _importer(kb.root, exported, fault="index").wait() != 0
    subprocess.run(["git", "commit", "-qam", "my work"], cwd=kb.root, capture_output=True)
    tree = set(git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", ".vouch").split())
    assert files <= tree, sorted(files - tree)[:5]
    res = run_cli("import-apply", str(exported), "--kb", str(kb.dir), "--json")
    assert res.code == 0, res.err
    res = run_cli("audit", "--verify", "--json", cwd=kb.root)
    assert res.code == 0, res.out


# -- what a bundle path names ----------------------------------------------------------------
def _not_a_bundle(tmp_path: Path, what: str) -> tuple[Path, str]:
    if what == "a device":
        return Path("/dev/zero"), "not a regular file"
    if what == "a FIFO":
        os.mkfifo(tmp_path / "pipe.tar.gz")
        return tmp_path / "pipe.tar.gz", "not a regular file"
    if what == "a directory":
        (tmp_path / "dir.tar.gz").mkdir()
        return tmp_path / "dir.tar.gz", "a directory"
    huge = tmp_path / "huge.tar.gz"
    with huge.open("wb") as fh:  # sparse: no disk used
        fh.truncate(Limits().compressed + 1)
    return huge, "larger than"


@pytest.mark.parametrize("what", ["a device", "a FIFO", "a directory", "a file too big"])
def test_a_path_that_is_no_bundle_file_is_refused_at_once(
    fresh: KB, tmp_path: Path, what: str
) -> None:
    """`/dev/zero` used to be read until memory ran out (an internal error, or the OOM
    killer), a FIFO blocked the command forever."""
    path, expected = _not_a_bundle(tmp_path, what)
    before = state(fresh)
    env = {**os.environ, "PYTHONPATH": str(Path(bundle.__file__).parents[2])}
    for verb in ("export-check", "import-check", "import-apply"):
        res = subprocess.run(
            [sys.executable, "-m", "vouch", verb, str(path), "--json"],
            cwd=fresh.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 1, (verb, res.stdout, res.stderr)
        assert expected in res.stdout and "Traceback" not in res.stderr, (verb, res.stdout)
    assert state(fresh) == before


# -- YAML that reads as other data than it shows ---------------------------------------------
DISGUISES = {
    "a claim's status given twice": ("claims/", b"status: ", b"status: archived\nstatus: "),
    "a claim's text under an explicit tag": ("claims/", b"text: ", b"text: !!str "),
    "a page title behind an anchor": ("pages/", b"title: ", b"title: &t "),
    "a source title behind an anchor": ("sources/", b"title: ", b"title: &t "),
    "a decision's approver given twice": (
        "decided/",
        b"decided_by: ",
        b"decided_by: x\ndecided_by: ",
    ),
    "a merge key in an entity": ("entities/", b"\ntype: ", b"\n<<: {aliases: []}\ntype: "),
}


@pytest.mark.parametrize("how", sorted(DISGUISES))
def test_a_file_whose_yaml_reads_as_other_data_is_refused(
    exported: Path, fresh: KB, run_cli, how: str
) -> None:
    """Each edit leaves the parsed object (and so its id) as it was, or changes it
    where a person reading the file sees something else: git diffs and reviews show the
    text, vouch acts on the data. vouch never writes such YAML."""
    prefix, old, new = DISGUISES[how]
    forged = repack(exported, _edited(members(exported), prefix, old, new))
    check = run_cli("export-check", str(forged), "--json")
    assert check.code == 1, check.out
    # an anchor is refused by the one safe reader itself (safeload), before any parse
    expected = "a YAML anchor (&t), which vouch does not read" if "anchor" in how else None
    assert any((expected or "reads as other data") in i for i in check.json()["issues"]), check.out
    before = state(fresh)
    res = run_cli("import-apply", str(forged), "--kb", str(fresh.dir), "--json")
    assert res.code == 1 and res.json()["error"]["code"] == "E102", res.out
    assert state(fresh) == before
