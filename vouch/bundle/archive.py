"""Writing a bundle and reading one back.

Writing (`export`) is deterministic: members in path order, each with the exported
commit's time as mtime, uid/gid 0, no user names, mode 0644, and a gzip header without
a name or a time; `generated_at` is the commit's time too. So the same commit exported
by the same vouch gives the same bytes, and `content_sha256` (over the file list) is the
same for the same knowledge whichever commit held it.

Reading (`check`) extracts nothing to disk, holds no more than the members' bytes
(read in bounded memory, `reading`: a bundle over `bundle.max_unpacked_mb` or
`bundle.max_members` is refused as soon as that shows), and refuses: an archive that is not exactly
one gzip stream holding a tar (trailing bytes, a damaged header), members that are not
regular files (links, devices, directories), unsafe or duplicate names, names outside
the knowledge layout, members the manifest does not list or listed files that are
missing, a size or sha256 that differs from the manifest, a manifest that is not exactly
what `export` writes — and then every knowledge file that is not valid (`content`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vouch import __version__
from vouch.bundle import reading
from vouch.bundle.content import checked, knowledge_problems
from vouch.bundle.layout import MANIFEST, committed_files, ignored, name_problem
from vouch.bundle.reading import Limits
from vouch.core import fsio, ids
from vouch.core.progress import Progress, step
from vouch.errors import NotFound, UsageError, ValidationFailed
from vouch.store.kb import KB

FORMAT = "vouch-bundle"
VERSION = 1
MAX_MANIFEST = 64 << 20
_ENTRY_BYTES = 512  # a manifest's line for one file is far shorter
_ENTRY_VALUES = 8  # `{`, `,` in an entry: 4 (and a comma or two in a path, at most)
_HEAD_BYTES = 64 << 10  # the manifest's fields but `files`
_HEAD_VALUES = 64
_SPARE_ENTRIES = 16  # listed files missing from the bundle, each named as a problem
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SHOWN = 20  # problems named in one refusal


@dataclass(frozen=True)
class Bundle:
    """A bundle that passed `check`: its manifest and files (`.vouch/`-relative path ->
    bytes), and the sha256 of the bundle file itself."""

    path: str
    sha256: str
    manifest: dict[str, Any]
    files: dict[str, bytes]
    parsed: dict[str, dict[str, Any]]  # path -> the object a sound object file holds


# -- export --------------------------------------------------------------------------------
def export(kb: KB, out: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Write the knowledge committed on the checked-out branch to `out` (atomically)."""
    repo = kb.repo
    head = repo.resolve("HEAD")
    if head is None:
        raise UsageError("nothing to export: this branch has no commits yet")
    if out.is_dir():
        raise UsageError(f"{out} is a directory", hint="name the bundle file, e.g. kb.tar.gz")
    if not out.parent.is_dir():
        raise UsageError(
            f"{out.parent} is not a folder here",
            hint="export into an existing folder (vouch does not create folders for it)",
        )
    blobs, problems = committed_files(kb, head)
    left_out = sorted(rel for rel in blobs if ignored(rel))
    for rel in left_out:
        del blobs[rel]
    paths = sorted(blobs)
    step(progress, "reading")
    files = dict(zip(paths, repo.read_blobs([blobs[p] for p in paths]), strict=True))
    problems += knowledge_problems(files, progress)
    if problems:
        raise ValidationFailed(
            first_problems(problems),
            what=f"knowledge in commit {head[:12]} "
            "(nothing was written; `vouch lint` shows each problem)",
        )
    when = _commit_time(kb, head)
    step(progress, "packing")
    manifest = _manifest(files, head, when)
    data = _pack(manifest, files, when)
    try:
        fsio.write_atomic(out, data)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror}") from exc
    return {
        "path": str(out),
        "files": len(files),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "source_commit": head,
        "content_sha256": manifest["content_sha256"],
        "ignored": left_out,
    }


def _commit_time(kb: KB, commit: str) -> int:
    found = kb.repo.store.read(commit)
    for line in (found[1] if found else b"").split(b"\n"):
        if line.startswith(b"committer "):
            return int(line.rsplit(b" ", 2)[1])
        if not line:
            break
    return 0


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _file_list(files: Mapping[str, bytes]) -> list[dict[str, Any]]:
    return [
        {"path": rel, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        for rel, data in sorted(files.items())
    ]


def content_digest(entries: list[dict[str, Any]]) -> str:
    """The sha256 of a file list: equal for equal knowledge, whatever commit held it."""
    return ids.sha256_hex(ids.canonical_json(entries))


def _manifest(files: Mapping[str, bytes], commit: str, when: int) -> dict[str, Any]:
    entries = _file_list(files)
    return {
        "format": FORMAT,
        "version": VERSION,
        "generated_at": _iso(when),
        "vouch_version": __version__,
        "source_commit": commit,
        "content_sha256": content_digest(entries),
        "files": entries,
    }


def _pack(manifest: dict[str, Any], files: Mapping[str, bytes], when: int) -> bytes:
    """The gzip'd tar: manifest first, then the files in path order. Headers are written
    here (plain ustar, what tarfile writes for these names) and the archive compressed in
    one call: tarfile's per-member machinery costs ~0.5 s at 13k members."""
    text = json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=True) + "\n"
    out = bytearray()
    for name, data in [(MANIFEST, text.encode("ascii")), *sorted(files.items())]:
        out += _header(name, len(data), when)
        out += data
        out += bytes(-len(data) % tarfile.BLOCKSIZE)
    out += bytes(2 * tarfile.BLOCKSIZE)  # end of archive
    out += bytes(-len(out) % tarfile.RECORDSIZE)
    return gzip.compress(bytes(out), compresslevel=6, mtime=0)


def _header(name: str, size: int, mtime: int) -> bytes:
    """A member's 512-byte header, exactly as tarfile writes it for a regular file with
    mode 0644, uid/gid 0 and no user names (tarfile itself for names ustar cannot hold)."""
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) >= 100 or not name.isascii():
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode, info.uname, info.gname = size, mtime, 0o644, "", ""
        return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    head = bytearray(tarfile.BLOCKSIZE)
    head[0 : len(raw)] = raw
    head[100:148] = b"0000644\0" + b"0000000\0" * 2 + b"%011o\0" % size + b"%011o\0" % mtime
    head[148:157] = b"        0"  # the checksum counts as spaces; type 0: a regular file
    head[257:265] = tarfile.POSIX_MAGIC
    head[148:155] = b"%06o\0" % sum(head)
    return bytes(head)


# -- check -----------------------------------------------------------------------------------
def check(
    path: Path, progress: Progress | None = None, limits: Limits | None = None
) -> tuple[Bundle | None, dict[str, Any]]:
    """The bundle when it passes, and the report `kb.export_check` returns. Read in
    bounded memory (`reading`): over `limits` (the defaults when None) it is refused as
    soon as that shows."""
    limits = limits or Limits()
    report: dict[str, Any] = {
        "ok": False,
        "path": str(path),
        "sha256": None,
        "files": 0,
        "unpacked_bytes": 0,
        "manifest": None,
        "issues": [],
    }
    try:
        raw = reading.open_file(path, limits)
    except FileNotFoundError:
        report["issues"] = ["no such file"]
        return None, report
    except reading.Unreadable as exc:
        report["issues"] = [str(exc)]
        return None, report
    except OSError as exc:  # unreadable: permissions, a name too long, a loop of links
        report["issues"] = [f"cannot be read ({exc.strerror or exc})"]
        return None, report
    step(progress, "unpacking")
    with raw:
        stream = reading.Inflating(raw, limits)
        try:
            manifest, files, issues = _unpack(stream, limits)
            report["sha256"] = stream.finish()
        except reading.TooBig as exc:
            report["sha256"] = _finished(stream)
            report["issues"] = [f"refused before reading it all: {exc}"]
            return None, report
        except reading.Unreadable as exc:
            report["sha256"] = _finished(stream)
            report["issues"] = [f"not a vouch bundle: {exc}"]
            return None, report
        except OSError as exc:
            report["issues"] = [f"cannot be read ({exc.strerror or exc})"]
            return None, report
    if manifest is not None:
        report["manifest"] = {
            k: manifest.get(k)
            for k in (
                "format",
                "version",
                "generated_at",
                "vouch_version",
                "source_commit",
                "content_sha256",
            )
        }
    parsed: dict[str, dict[str, Any]] = {}
    if not issues:  # what the files hold, once the archive itself is sound
        issues, parsed = checked(files, progress)
    report.update(
        ok=not issues, files=len(files), unpacked_bytes=sum(map(len, files.values())), issues=issues
    )
    if issues or manifest is None:
        return None, report
    return Bundle(str(path), report["sha256"], manifest, files, parsed), report


def _finished(stream: reading.Inflating) -> str | None:
    try:
        return stream.finish()
    except (OSError, reading.TooBig):
        return None


def load(path: Path, progress: Progress | None = None, limits: Limits | None = None) -> Bundle:
    """The checked bundle, or ValidationFailed naming every problem (nothing is written)."""
    if not path.exists():
        raise NotFound(f"no such file: {path}", hint="name a bundle written by `vouch export`")
    bundle, report = check(path, progress, limits)
    if bundle is None:
        raise ValidationFailed(
            first_problems(report["issues"]), what=f"bundle {path} (refused; nothing was written)"
        )
    return bundle


def first_problems(problems: list[str]) -> list[str]:
    more = len(problems) - _SHOWN
    return problems[:_SHOWN] + ([f"... and {more} more"] if more > 0 else [])


def _unpack(
    stream: reading.Inflating, limits: Limits
) -> tuple[dict[str, Any] | None, dict[str, bytes], list[str]]:
    """Manifest, files and every structural problem (nothing is extracted to disk)."""
    issues: list[str] = []
    seen: set[str] = set()
    contents: dict[str, bytes] = {}
    for member in reading.members(stream, limits):
        if member is None:
            issues.append(
                "bytes after the archive's last readable member (a damaged or altered header?)"
            )
            continue
        info = member.info
        shown = _show(info.name)
        problem = name_problem(info.name)
        if problem is None and info.name in seen:
            problem = "appears twice"
        if problem is None and info.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
            problem = f"is {_member_type(info)}, not a regular file"
        seen.add(info.name)
        if problem is not None:
            issues.append(f"member {shown} {problem}")
            continue
        body = member.body or b""
        if len(body) != info.size:
            issues.append(f"member {shown} is cut short")
            continue
        contents[info.name] = body
    listable = len(seen - {MANIFEST})  # the most files a sound manifest lists
    manifest, manifest_issues = _read_manifest(contents.pop(MANIFEST, None), limits, listable)
    issues += manifest_issues
    if manifest is None:
        return None, {}, issues
    listed = {e["path"]: e for e in manifest["files"]}
    files: dict[str, bytes] = {}
    for name, body in contents.items():
        entry = listed.get(name)
        if entry is None:
            issues.append(f"member {_show(name)} is not in the manifest")
        elif len(body) != entry["bytes"]:
            issues.append(f"{_show(name)}: {len(body)} bytes, the manifest says {entry['bytes']}")
        elif hashlib.sha256(body).hexdigest() != entry["sha256"]:
            issues.append(f"{_show(name)}: its sha256 differs from the manifest's")
        else:
            files[name] = body
    issues += [
        f"{_show(p)}: listed in the manifest but not in the bundle"
        for p in sorted(listed.keys() - seen)
    ]
    return manifest, files, issues


def _member_type(info: tarfile.TarInfo) -> str:
    if info.issym():
        return f"a symbolic link (to {_show(info.linkname)})"
    if info.islnk():
        return f"a hard link (to {_show(info.linkname)})"
    if info.isdir():
        return "a directory"
    if info.ischr() or info.isblk():
        return "a device"
    if info.isfifo():
        return "a FIFO"
    return f"of tar type {info.type!r}"


def _show(name: str) -> str:
    return repr(name) if not name.isprintable() or '"' in name else f'"{name}"'


def _read_manifest(
    body: bytes | None, limits: Limits, members: int
) -> tuple[dict[str, Any] | None, list[str]]:
    """The manifest when it is exactly what `export` writes (every field checked, the
    content digest recomputed), else None and every problem. Before it is parsed, its
    size and its count of JSON values are bounded by the files it may list (`bounded`)."""
    if body is None:
        return None, [f"no {MANIFEST}: not a vouch bundle"]
    problem = _unbounded(body, min(limits.members, members) + _SPARE_ENTRIES, limits)
    if problem is not None:
        return None, [f"{MANIFEST} {problem}"]
    try:
        text = body.decode()
        del body  # held once: its text, then what that parses to
        manifest = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return None, [f"{MANIFEST} is not JSON ({str(exc)[:200]})"]
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None, [f"{MANIFEST} does not describe a {FORMAT}"]
    version = manifest.get("version")
    if version != VERSION:
        return None, [
            f"{MANIFEST}: format version {version!r}; this vouch reads version "
            f"{VERSION} (made by a newer vouch?)"
        ]
    issues = [f"{MANIFEST}: {problem}" for problem in _manifest_fields(manifest)]
    entries = manifest.get("files")
    if not isinstance(entries, list):
        return None, [*issues, f"{MANIFEST}: files must be a list"]
    if len(entries) > limits.members:
        return None, [*issues, f"{MANIFEST}: lists more than {limits.members} files"]
    paths: set[str] = set()
    for entry in entries:
        if not _file_entry(entry):
            issues.append(f"{MANIFEST}: malformed file entry {str(entry)[:120]}")
            continue
        problem = name_problem(entry["path"]) if entry["path"] != MANIFEST else "is reserved"
        if problem is None and entry["path"] in paths:
            problem = "is listed twice"
        if problem is not None:
            issues.append(f"{MANIFEST}: path {_show(entry['path'])} {problem}")
        paths.add(entry["path"])
    if not issues and manifest["content_sha256"] != content_digest(
        sorted(entries, key=lambda e: str(e["path"]))
    ):
        issues.append(f"{MANIFEST}: content_sha256 does not match its file list")
    return (None if issues else manifest), issues


def _unbounded(body: bytes, entries: int, limits: Limits) -> str | None:
    """Why a manifest listing at most `entries` files cannot be this `body`, or None.

    Parsing JSON costs tens of bytes of memory per value whatever its text: 46 MB of
    `[{},{},...]` parse to over a gigabyte. Every value but a container's first is
    preceded by a comma, and every container opens with `{` or `[`, so counting those
    bytes (a C loop each, strings included) bounds the values before any is built.
    """
    most = min(MAX_MANIFEST, entries * _ENTRY_BYTES + _HEAD_BYTES)
    setting = (
        f"the {entries} files it may list need (the bundle's other members, at most "
        "bundle.max_members in config.yaml)"
    )
    if len(body) > most:
        return f"is larger than {most >> 10} KiB, more than {setting}"
    values = body.count(b",") + body.count(b"{") + body.count(b"[")
    if values > entries * _ENTRY_VALUES + _HEAD_VALUES:
        return f"holds {values} JSON values and separators, more than {setting}"
    return None


_MANIFEST_KEYS = {
    "format",
    "version",
    "generated_at",
    "vouch_version",
    "source_commit",
    "content_sha256",
    "files",
}
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _manifest_fields(manifest: dict[str, Any]) -> list[str]:
    out = [f"unknown field {k!r}" for k in sorted(set(manifest) - _MANIFEST_KEYS)]
    checks = {
        "generated_at": _TIME,
        "source_commit": _COMMIT,
        "content_sha256": _SHA256,
        "vouch_version": re.compile(r"[0-9A-Za-z.+!-]{1,64}"),
    }
    for key, pattern in checks.items():
        value = manifest.get(key)
        if not isinstance(value, str) or not pattern.fullmatch(value):
            out.append(f"{key} is missing or malformed")
    return out


def _file_entry(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and set(entry) == {"path", "sha256", "bytes"}
        and isinstance(entry["path"], str)
        and isinstance(entry["sha256"], str)
        and bool(_SHA256.fullmatch(entry["sha256"]))
        and isinstance(entry["bytes"], int)
        and not isinstance(entry["bytes"], bool)
        and entry["bytes"] >= 0
    )
