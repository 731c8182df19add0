"""What the audit check reads from git: the commits that changed the audit log, their
messages, who added a line, and the anchor tags kept outside every branch.

Each function is one git process (or none: messages come through the long-lived
`cat-file`), so checking a history of any length costs a fixed number of processes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vouch.git.command import outcome, run
from vouch.git.history import Change, Signature, trusting
from vouch.git.repo import Repo


@dataclass(frozen=True)
class Touch:
    """One commit that changed files under the audit paths (for a merge: no diff)."""

    sha: str
    parents: list[str]
    changes: list[Change]


def touching(repo: Repo, rev: str, pathspecs: Iterable[str]) -> list[Touch]:
    """Every commit in `rev`'s history that changed `pathspecs`, parents before children
    (`--topo-order --reverse`), with the blobs each non-merge commit changed. Side
    branches are kept (`--full-history`): a commit a merge left behind is still listed.
    Only hex ids and NUL-terminated paths are read, so no message can forge a record."""
    out = repo.git(
        "log",
        "--full-history",
        "--topo-order",
        "--reverse",
        "--raw",
        "-z",
        "--no-abbrev",
        "--no-renames",
        "--format=%x01%H%x00%P",
        rev,
        "--",
        *pathspecs,
    )
    found: list[Touch] = []
    for record in out.split("\x01")[1:]:
        parts = record.split("\0")
        if len(parts) < 2:
            continue
        sha, parents = parts[0].strip(), parts[1].split()
        changes: list[Change] = []
        rest = parts[2:]
        i = 0
        while i + 1 < len(rest):
            head, path = rest[i].strip("\n"), rest[i + 1]
            i += 2
            fields = head.lstrip(":").split()
            if len(fields) < 5:
                continue
            old, new = (None if set(x) == {"0"} else x for x in fields[2:4])
            changes.append(Change(path, old, new, fields[0], fields[1]))
        found.append(Touch(sha, parents, changes))
    return found


def messages(repo: Repo, commits: list[str]) -> dict[str, str]:
    """commit -> its message (everything after the header), read in-process."""
    out: dict[str, str] = {}
    for sha, found in zip(commits, repo.store.read_many(commits), strict=True):
        if found is not None and found[0] == "commit":
            out[sha] = found[1].partition(b"\n\n")[2].decode("utf-8", "replace")
    return out


def adder(repo: Repo, candidates: list[str], needle: str, pathspecs: Iterable[str]) -> str | None:
    """Which of `candidates` added `needle` under `pathspecs` (`git log -S`, only those
    commits diffed; a merge against each parent), or None."""
    if not candidates:
        return None
    out = repo.git(
        "log", "--no-walk=unsorted", "-m", "--format=%H", f"-S{needle}", *candidates,
        "--", *pathspecs, check=False,
    )  # fmt: skip
    lines = out.split()
    return lines[0] if lines else None


# -- anchors: annotated tags no branch carries ----------------------------------------------
@dataclass(frozen=True)
class Tag:
    ref: str
    target: str  # the commit it names
    message: str


def tags(repo: Repo, prefix: str) -> list[Tag]:
    """Annotated tags under `prefix` (refs/tags/...), one for-each-ref call; the
    message without its signature block."""
    rows = repo.ref_records(
        [prefix], ("refname", "objecttype", "*objectname", "contents:subject", "contents:body")
    )
    out = []
    for row in rows:
        if len(row) >= 5 and row[1] == "tag" and row[2]:
            out.append(Tag(row[0], row[2], f"{row[3]}\n\n{row[4]}"))
    return out


def make_tag(repo: Repo, name: str, target: str, message: str, *, sign: bool) -> None:
    """An annotated tag `name` on `target` (signed with `sign`: GPG or SSH as configured);
    refused by git when it exists."""
    repo.git("tag", "-s" if sign else "-a", "-F", "-", name, target, input=message)


def signs_tags(repo: Repo) -> bool:
    """Whether this clone signs: tag.gpgSign or commit.gpgSign."""
    for key in ("tag.gpgsign", "commit.gpgsign"):
        value = run(["config", "--get", key], repo.root, check=False).strip().lower()
        if value in ("true", "yes", "on", "1"):
            return True
    return False


def tag_signature(repo: Repo, ref: str, allowed: Path | None = None) -> Signature:
    """What `git verify-tag` says of one tag: G and its signer when the signature is
    good and trusted (GPG keyring or gpg.ssh.allowedSignersFile; `allowed`: the SSH
    allowed signers file to judge by instead), N when unsigned, B otherwise."""
    found = repo.store.read(ref)
    if found is None or b"-----BEGIN " not in found[1]:
        return Signature("N", "", "")
    code, err = outcome([*trusting(allowed), "verify-tag", ref], repo.root)
    signer = ""
    for line in err.splitlines():
        for mark in ('Good "git" signature for ', "Good signature from "):
            if mark in line:
                signer = line.split(mark, 1)[1].split(" with ", 1)[0].strip().strip('"')
    return Signature("G" if code == 0 and signer else "B", signer, "")


def trust_fingerprint(repo: Repo) -> str | None:
    """What a good SSH signature's verdict depends on here: the allowed signers file
    (gpg.ssh.allowedSignersFile), by content; None for GPG (its keyring is not a file
    to fingerprint) or when no file is set."""
    import hashlib
    from pathlib import Path

    from vouch.git.command import config_value

    if (config_value(repo.root, "gpg.format") or "").strip().lower() != "ssh":
        return None
    where = (config_value(repo.root, "gpg.ssh.allowedSignersFile") or "").strip()
    if not where:
        return None
    path = Path(where).expanduser()
    try:
        data = (path if path.is_absolute() else repo.root / path).read_bytes()
    except OSError:
        return None
    return hashlib.sha256(b"ssh\0" + data).hexdigest()[:32]
