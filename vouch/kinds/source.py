"""Sources: captured bytes, addressed by their sha256, with metadata beside them.

`sources/<shard>/<sha256>/meta.yaml` describes; `.../content` holds the exact bytes.
Sources are not gated: registering one is an audited commit.

Sources have versions: registering changed content at a locator that already has a
current source makes the new one current (`supersedes`: the version it replaced) and
marks the old one `superseded_by` it, in the same commit (`vouch.sources`). Both stay
content-addressed and verifiable; only the bytes' sha256 is the id, so these two
fields are metadata like the title. A superseded version is hidden from search like a
superseded claim (`status_of`).
"""

from __future__ import annotations

from typing import Any

from vouch.core import ids
from vouch.kinds.base import SCOPES, Chunk, Field, Kind, Obj

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


def content_path_for(source_id: str) -> str:
    return f"{directory_for(source_id)}/content"


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


def status_of(obj: Obj) -> str:
    """`superseded` for a replaced version (search hides it unless asked), else ""."""
    return "superseded" if obj.get("superseded_by") else ""


def chunks(obj: Obj, content: Any = None) -> list[Chunk]:
    """Source content is chunked by the index (it reads PDFs and long text)."""
    text = content if isinstance(content, str) else ""
    return [KIND.chunk(obj, text)] if text.strip() else []
