"""Search filters, applied in SQL: kind, type, status, format, and tags (AND, by join)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


def ascii_fold(text: str) -> str:
    """Lower case for ASCII letters only, as SQLite's lower() does."""
    return "".join(c.lower() if c.isascii() else c for c in text)


def _tuple(values: Iterable[str] | str | None) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        return (values,)
    return tuple(dict.fromkeys(str(v) for v in values))


class Filters(NamedTuple):
    """Each field narrows the result; within one field values are alternatives (OR),
    except `tags`, where a document must carry every tag (AND)."""

    kinds: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    exclude_statuses: tuple[str, ...] = ()
    # a transcript's turns (issue 19): who spoke (case-insensitive) and when, ISO
    # dates or date-times; `until` takes in all of its day (or month, or minute)
    speakers: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None

    @classmethod
    def of(
        cls,
        *,
        kinds: Iterable[str] | str | None = None,
        types: Iterable[str] | str | None = None,
        statuses: Iterable[str] | str | None = None,
        formats: Iterable[str] | str | None = None,
        tags: Iterable[str] | str | None = None,
        exclude_statuses: Iterable[str] | str | None = None,
        speakers: Iterable[str] | str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> Filters:
        from vouch.kinds import kind_named

        kinds_t = tuple(kind_named(k).name for k in _tuple(kinds))  # "claims" or "claim"
        return cls(
            kinds_t,
            _tuple(types),
            _tuple(statuses),
            _tuple(formats),
            _tuple(tags),
            _tuple(exclude_statuses),
            tuple(dict.fromkeys(ascii_fold(s) for s in _tuple(speakers))),
            since or None,
            until or None,
        )

    def __bool__(self) -> bool:
        return any(
            (
                self.kinds,
                self.types,
                self.statuses,
                self.formats,
                self.tags,
                self.exclude_statuses,
                self.speakers,
                self.since,
                self.until,
            )
        )

    def sql(self, alias: str = "c") -> tuple[str, list[object]]:
        """A WHERE fragment (`1` when empty) over the chunks table aliased `alias`."""
        clauses: list[str] = []
        params: list[object] = []
        for column, values in (
            ("kind", self.kinds),
            ("type", self.types),
            ("status", self.statuses),
            ("format", self.formats),
        ):
            if values:
                clauses.append(f"{alias}.{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        if self.exclude_statuses:
            clauses.append(f"{alias}.status NOT IN ({','.join('?' * len(self.exclude_statuses))})")
            params.extend(self.exclude_statuses)
        if self.speakers:
            marks = ",".join("?" * len(self.speakers))
            clauses.append(f"lower({alias}.speaker) IN ({marks})")
            params.extend(self.speakers)
        if self.since:
            clauses.append(f"{alias}.time >= ?")
            params.append(self.since)
        if self.until:
            clauses.append(f"{alias}.time <= ?")
            params.append(self.until + "~")  # "~" sorts after every ISO character
        if self.tags:
            clauses.append(
                f"{alias}.doc_key IN (SELECT doc_key FROM doc_tags WHERE tag IN "
                f"({','.join('?' * len(self.tags))}) GROUP BY doc_key "
                f"HAVING COUNT(DISTINCT tag) = ?)"
            )
            params.extend(self.tags)
            params.append(len(self.tags))
        return (" AND ".join(clauses) or "1"), params
