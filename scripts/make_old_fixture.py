"""Make a knowledge base in the oldest format vouch ever landed, byte for byte, every run.

The oldest format is what vouch's first commit (`665fca1`, "Foundation", 2026-11-22)
wrote: `vouch init` and `vouch source add` were all it had. Its layout, as that code
writes it (and tests/test_migrate.py checks against that code whenever vouch's own git
history is at hand):

    .vouch/config.yaml        the template of the time (no schema_version: version 1)
    .vouch/.gitignore         index/, *.lock, locks/, searches.log.jsonl
    .vouch/.gitattributes     audit.log.jsonl merge=union
    .vouch/audit.log.jsonl    one JSON line per event: id, event, actor, created_at,
                              object_ids, data, prev_hash, hash (sha256 of the canonical
                              JSON of the rest), chained by prev_hash
    .vouch/sources/<2>/<sha256>/meta.yaml   id, type, locator, title, hash, immutable,
                              scope, byte_size, media_type, tags, metadata, created_at
    .vouch/sources/<2>/<sha256>/content     the bytes, under a bare name (a media
                              type's extension, `content.md`, came a day later)

one commit per command, its message `vouch: <subject>` with `Vouch-Event` and
`Vouch-Actor` trailers. Times, event ids and the git identity are pinned here, so the
same commits come out of every run (what the old code left to the clock and chance).

    python scripts/make_old_fixture.py DIR      # DIR must not exist, or be empty
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

OLDEST_COMMIT = "665fca13d717d0c9d5483d825bcf2515fd5d1269"  # vouch's first commit
WHEN = "2026-11-22T07:00:00Z"
ACTOR = "Old Vouch"
EMAIL = "old-vouch@example.com"

# the bytes 665fca1's vouch/templates/config.yaml holds (what its `vouch init` commits)
CONFIG = """\
# vouch configuration for this knowledge base.
# This file is tracked by git. Comments you add here survive vouch's own edits.

# Who you are when no --as flag or VOUCH_AGENT variable says otherwise.
# Left empty, vouch uses git's user.name.
agent: ""

review:
  # Every claim must cite at least one existing source or evidence id.
  require_citations: true
  # "human": a proposer may never approve their own proposal.
  # "trusted-agent": self-approval is allowed (single-person or automated repos).
  approver_role: human

index:
  # Refresh a stale index automatically before searching. When false, a stale index
  # is an error (E002) until `vouch index rebuild` runs.
  auto_refresh: true
  # Lexical backend: fts5 (SQLite FTS5, default) or whoosh (pure Python).
  lexical: fts5

embedding:
  # false: lexical-only search; vector requests get a clear error.
  enabled: true
  # "default" is the model shipped inside vouch; or a path to any model2vec model directory.
  model: default

search:
  default_top: 10
  rrf_k: 60

lock:
  # How long a writer waits for another writer in this clone before giving up.
  timeout_seconds: 30
"""
GITIGNORE = """\
# Derived and local state: rebuilt or recreated by vouch, never committed.
index/
*.lock
locks/
searches.log.jsonl
"""
GITATTRIBUTES = """\
# git's union merge driver lets two branches append to the log
audit.log.jsonl merge=union
"""
DOCUMENT = "docs/deploy.md"
DOCUMENT_TEXT = """\
# Deploying

Every deploy needs a green CI run and a second approver.
Roll back with `make rollback` within ten minutes of a failed health check.
"""
META_KEYS = (
    "id",
    "type",
    "locator",
    "title",
    "hash",
    "immutable",
    "scope",
    "byte_size",
    "media_type",
    "tags",
    "metadata",
    "created_at",
)


def _git(root: Path, *args: str, input: bytes | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": ACTOR,
        "GIT_AUTHOR_EMAIL": EMAIL,
        "GIT_COMMITTER_NAME": ACTOR,
        "GIT_COMMITTER_EMAIL": EMAIL,
        "GIT_AUTHOR_DATE": "2026-11-22T07:00:00+0000",
        "GIT_COMMITTER_DATE": "2026-11-22T07:00:00+0000",
    }
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, input=input, capture_output=True, check=True
    )
    return done.stdout.decode()


def event(name: str, object_ids: list[str], prev_hash: str, n: int) -> dict[str, object]:
    """An audit event as 665fca1's `audit.make_event` made it (its id pinned)."""
    record: dict[str, object] = {
        "id": f"{WHEN.replace(':', '').replace('-', '')}-{n:08x}",
        "event": name,
        "actor": ACTOR,
        "created_at": WHEN,
        "object_ids": object_ids,
        "data": {},
        "prev_hash": prev_hash,
    }
    body = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    record["hash"] = hashlib.sha256(body.encode()).hexdigest()
    return record


def line(record: dict[str, object]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def meta(content: bytes, locator: str) -> str:
    """A source's meta.yaml as 665fca1's ruamel dump wrote it (block style)."""
    sha = hashlib.sha256(content).hexdigest()
    values = {
        "id": sha,
        "type": "file",
        "locator": locator,
        "title": locator.rsplit("/", 1)[-1],
        "hash": f"sha256:{sha}",
        "immutable": "true",
        "scope": "project",
        "byte_size": str(len(content)),
        "media_type": "text/markdown",
        "tags": "[]",
        "metadata": "{}",
        "created_at": f"'{WHEN}'",
    }
    return "".join(f"{key}: {values[key]}\n" for key in META_KEYS)


def _commit(root: Path, subject: str, event_name: str) -> None:
    _git(root, "add", "-A")
    message = f"vouch: {subject}\n\nVouch-Event: {event_name}\nVouch-Actor: {ACTOR}\n"
    _git(root, "commit", "-q", "--no-verify", "-F", "-", input=message.encode())


def make(root: Path) -> dict[str, str]:
    """Build the knowledge base in `root` (made; must be empty); returns its ids."""
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise SystemExit(f"{root} is not empty")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.name", ACTOR)
    _git(root, "config", "user.email", EMAIL)
    _git(root, "config", "commit.gpgsign", "false")
    document = root / DOCUMENT
    document.parent.mkdir()
    document.write_text(DOCUMENT_TEXT, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "docs: how we deploy")

    vouch = root / ".vouch"
    vouch.mkdir()
    (vouch / "config.yaml").write_text(CONFIG, encoding="utf-8")
    (vouch / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    (vouch / ".gitattributes").write_text(GITATTRIBUTES, encoding="utf-8")
    init = event("kb.init", [], "", 1)
    log = vouch / "audit.log.jsonl"
    log.write_text(line(init), encoding="utf-8")
    _commit(root, "initialise knowledge base", "kb.init")

    content = DOCUMENT_TEXT.encode()
    sha = hashlib.sha256(content).hexdigest()
    folder = vouch / "sources" / sha[:2] / sha
    folder.mkdir(parents=True)
    (folder / "content").write_bytes(content)
    (folder / "meta.yaml").write_text(meta(content, DOCUMENT), encoding="utf-8")
    registered = event("source.register", [sha], str(init["hash"]), 2)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(line(registered))
    _commit(root, f"register source {sha[:12]}", "source.register")
    return {"source": sha, "head": _git(root, "rev-parse", "HEAD").strip()}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    made = make(Path(sys.argv[1]))
    print(json.dumps(made))
