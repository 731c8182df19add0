"""Content-addressed identifiers.

Source ids are the sha256 of the captured bytes. Every other object id is
`<slug>-<hash8>`: a kebab-case slug of its text/title/name and the first 8 hex digits of
the sha256 of its canonical creation content, so creating the same thing twice yields
the same id. Proposal ids sort by time: `YYYYMMDD-HHMMSS-<hash8>`.

Ids become file names, so every id that enters from outside is validated here: no path
separators, no `..`, nothing that could leave `.vouch/`.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from datetime import UTC, datetime

from vouch.errors import InvalidId

SLUG_MAX = 48
_SLUG_ID = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?-[0-9a-f]{8}\Z")
_SHA256 = re.compile(r"^[0-9a-f]{64}\Z")
_PROPOSAL = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{8}\Z")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_json(value: object) -> bytes:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: an id can be derived before validation refuses non-UTF-8 text.
    return text.encode("utf-8", "surrogatepass")


def slugify(text: str, fallback: str = "item") -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > SLUG_MAX:
        slug = slug[:SLUG_MAX].rsplit("-", 1)[0] or slug[:SLUG_MAX]
    return slug.strip("-") or fallback


def object_id(label: str, identity: object, fallback: str = "item") -> str:
    """`<slug>-<hash8>` for an object whose identity is the JSON value `identity`."""
    return f"{slugify(label, fallback)}-{sha256_hex(canonical_json(identity))[:8]}"


def proposal_id(identity: object, now: datetime | None = None) -> str:
    """`YYYYMMDD-HHMMSS-<8 hex>`: the time, then the millisecond (3 hex digits, so ids
    made in one second sort in the order they were made) and 5 of the identity's hash."""
    now = now or datetime.now(UTC)
    digest = sha256_hex(canonical_json(identity))[:5]
    return f"{now:%Y%m%d-%H%M%S}-{now.microsecond // 1000:03x}{digest}"


def is_source_id(value: str) -> bool:
    return bool(_SHA256.match(value))


def is_sha256(value: str) -> bool:
    """64 lowercase hex digits."""
    return bool(_SHA256.match(value))


def is_object_id(value: str) -> bool:
    return bool(_SLUG_ID.match(value))


def is_proposal_id(value: str) -> bool:
    return bool(_PROPOSAL.match(value))


def check_id(value: object, what: str = "id") -> str:
    """Return `value` if it is a well-formed vouch id, else raise InvalidId."""
    if not isinstance(value, str) or not (
        is_source_id(value) or is_object_id(value) or is_proposal_id(value)
    ):
        shown = value if isinstance(value, str) and len(value) < 120 else repr(value)[:120]
        raise InvalidId(
            f"{what} {shown!r} is not a vouch id",
            hint="ids are a sha256 (sources) or <slug>-<8 hex> (other objects)",
        )
    return value


_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}\Z")


def shard(object_id_: str) -> str:
    """Two hex digits that spread object files over 256 directories.

    Git rewrites a whole tree object when one entry changes; sharding keeps each
    directory's tree small, so a commit costs the same at 1k and at 100k objects.
    """
    return object_id_[:2] if is_source_id(object_id_) else object_id_[-8:-6]


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
