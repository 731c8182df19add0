"""Sources: captured bytes, addressed by their sha256, with metadata beside them.

`sources/<shard>/<sha256>/meta.yaml` describes; `.../content.<ext>` holds the exact bytes,
named with its media type's usual extension (`content.md`, `content.pdf`) so a git host
renders it in a pull request. A media type without a known extension, and every source
registered before extensions existed, has a bare `content`: readers accept both, and
nothing is renamed (a rename would rewrite every source directory of an existing
knowledge base in one commit for no gain in what it holds).
Sources are not gated: registering one is an audited commit.

Sources have versions: registering changed content at a locator that already has a
current source makes the new one current (`supersedes`: the version it replaced) and
marks the old one `superseded_by` it, in the same commit (`vouch.sources`). Both stay
content-addressed and verifiable; only the bytes' sha256 is the id, so these two
fields are metadata like the title. A superseded version is hidden from search like a
superseded claim (`status_of`).

A source can be redacted by a decision (`vouch redact <source-id>`, a change proposal):
its content file goes, its meta.yaml stays as a tombstone — the id, locator, hash and
size, without title, tags or metadata, and `redacted_at` — so every citation of it still
resolves, to "redacted" (`is_redacted`); the quotes of the evidence citing it go too.
Bytes that hash to a redacted id are never registered again (`vouch.store.sources`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile
from vouch.kinds.base import REDACTED, SCOPES, Chunk, Field, Kind, Obj, redacted

TYPES = (
    "file",
    "url",
    "transcript",
    "message",
    "commit",
    "issue",
    "screenshot",
    "pdf",
    "audio",
    "video",
    "folder",
)

SCHEMA = (
    Field("id", "str", required=True, ids=True),
    Field("type", "str", enum=TYPES, default="file"),
    Field("locator", "str", required=True),
    Field("title", "str"),
    Field("hash", "str", required=True),
    Field("immutable", "bool", default=True),
    Field("scope", "str", enum=SCOPES, default="project"),
    Field("byte_size", "int", required=True, min=0),
    Field("media_type", "str"),
    Field("tags", "list"),
    Field("metadata", "map"),
    Field("created_at", "time", required=True),
    Field("supersedes", "str", ids=True),  # the version of this locator it replaced
    Field("superseded_by", "str", ids=True),  # the version that replaced it
    Field("redacted_at", "time"),  # a decision removed its bytes: the tombstone's mark
)

KIND = Kind(
    name="source",
    plural="sources",
    fields=SCHEMA,
    label_field="title",
    identity=lambda o: {"hash": o.get("hash")},
    ext="",
    title_of=lambda o: str(o.get("title") or o.get("locator") or ""),
)

load = KIND.load
dump = KIND.dump


def path_for(source_id: str) -> str:
    """Path of the source's meta.yaml relative to `.vouch/`."""
    return f"{directory_for(source_id)}/meta.yaml"


CONTENT = "content"
# A fixed table, not `mimetypes.guess_extension`: that one reads /etc/mime.types, so the
# same registration would name its file differently on two machines.
EXTENSIONS = {
    "text/markdown": ".md",
    "text/x-markdown": ".md",
    "text/plain": ".txt",
    "text/x-rst": ".rst",
    "text/html": ".html",
    "text/csv": ".csv",
    "text/xml": ".xml",
    "application/xml": ".xml",
    "application/json": ".json",
    "application/yaml": ".yaml",
    "application/x-yaml": ".yaml",
    "text/yaml": ".yaml",
    "application/toml": ".toml",
    "text/x-python": ".py",
    "text/javascript": ".js",
    "application/javascript": ".js",
    "text/x-sh": ".sh",
    "application/x-sh": ".sh",
    "application/pdf": ".pdf",
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/svg+xml": ".svg",
    "image/webp": ".webp",
    "audio/mpeg": ".mp3",
    "video/mp4": ".mp4",
}
CONTENT_NAMES = frozenset({CONTENT, *(CONTENT + ext for ext in EXTENSIONS.values())})


def content_name(media_type: object) -> str:
    """The content file's name for a media type: `content.md`, or `content` when the
    type has no known extension."""
    base = str(media_type or "").split(";", 1)[0].strip().lower()
    return CONTENT + EXTENSIONS.get(base, "")


def is_content_name(name: str) -> bool:
    """Whether a file name inside a source directory names its bytes."""
    return name in CONTENT_NAMES


def content_path_for(source_id: str, media_type: object = None) -> str:
    """Where a new source's bytes are written, relative to `.vouch/`."""
    return f"{directory_for(source_id)}/{content_name(media_type)}"


def read_content(read: Callable[[str], bytes | None], source_id: str) -> bytes | None:
    """A source's bytes through `read` (a `.vouch/`-relative path -> bytes or None: a
    commit's tree, the work tree), wherever its content file is named: the name its
    meta.yaml's media type gives, else a bare `content` (older knowledge bases), else
    any content name (a media type edited afterwards)."""
    folder = directory_for(source_id)
    meta = read(f"{folder}/meta.yaml")
    media_type = None
    if meta is not None:
        try:
            media_type = load(meta.decode("utf-8"), where=f"{folder}/meta.yaml").get("media_type")
        except (CorruptFile, UnicodeDecodeError):
            media_type = None
    first = content_name(media_type)
    for name in (first, CONTENT, *sorted(CONTENT_NAMES - {first, CONTENT})):
        data = read(f"{folder}/{name}")
        if data is not None:
            return data
    return None


def directory_for(source_id: str) -> str:
    if not ids.is_source_id(source_id):
        ids.check_id(source_id, "source id")
        raise ids.InvalidId(f"source id {source_id!r} must be a sha256 (64 hex digits)")
    return f"sources/{ids.shard(source_id)}/{source_id}"


def new(content: bytes, **values: Any) -> Obj:
    """Metadata for `content`; the id is the sha256 of the bytes, nothing else."""
    sha = ids.sha256_hex(content)
    data = {k: v for k, v in values.items() if v is not None}
    data.update(id=sha, hash=f"sha256:{sha}", byte_size=len(content))
    data.setdefault("created_at", ids.now_iso())
    obj = KIND.normalize(data)
    KIND.validate_or_raise(obj)
    return obj


# Locators that name no document: sources registered under them are never versions of
# one another (`vouch source add -` records `stdin`), nor can a path name them.
UNVERSIONED = frozenset(("", "-", "stdin"))


def shown(locator: object, span: object = None) -> str | None:
    """`docs/a.rst:L5-L9`: a citation by its source's locator, which every method takes
    back for the locator's current version (`vouch.store.source_names`); None when the
    locator names no document (`stdin`)."""
    if not isinstance(locator, str) or locator in UNVERSIONED:
        return None
    return f"{locator}:{span}" if span else locator


def path_of(obj: Obj | None, span: object = None) -> str | None:
    """`shown` for a source; None for a superseded version (its path names the current
    one now)."""
    if obj is None or obj.get("superseded_by"):
        return None
    return shown(obj.get("locator"), span)


def status_of(obj: Obj) -> str:
    """`redacted` for a tombstone, `superseded` for a replaced version (search hides
    both unless asked), else ""."""
    if is_redacted(obj):
        return REDACTED
    return "superseded" if obj.get("superseded_by") else ""


def is_redacted(obj: Obj | None) -> bool:
    """Whether a source's meta is a tombstone: a decision removed its bytes."""
    return obj is not None and redacted(KIND, obj)


def redacted_in(read: Callable[[str], bytes | None], source_id: str) -> bool:
    """Whether the source's meta.yaml, read through `read` (a `.vouch/`-relative path ->
    bytes or None), is a tombstone."""
    data = read(path_for(source_id)) if ids.is_source_id(source_id) else None
    return is_tombstone(data)


def is_tombstone(meta: bytes | None) -> bool:
    """Whether meta.yaml bytes are a redacted source's tombstone. Unreadable ones are not
    (lint names them)."""
    if meta is None or b"redacted_at" not in meta:
        return False
    try:
        return is_redacted(load(meta.decode("utf-8"), where="meta.yaml"))
    except (CorruptFile, UnicodeDecodeError):
        return False


def chunks(obj: Obj, content: Any = None) -> list[Chunk]:
    """Source content is chunked by the index (it reads PDFs and long text)."""
    text = content if isinstance(content, str) else ""
    return [KIND.chunk(obj, text)] if text.strip() else []
