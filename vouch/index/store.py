"""The SQLite half of the derived index: schema, `index_meta`, opening and validating.

`search.db` holds the chunks, an FTS5 table kept in sync with them by triggers, the
headings of markdown documents, per-document tags (for AND filters by join) and
`index_meta`. Anything that cannot be read or parsed is corruption (spec
search-index-lifecycle: "any read or parse failure"); callers rebuild, never crash.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar, cast

from vouch.index import vectors
from vouch.index.graph import NO_GRAPH
from vouch.index.location import DB_NAME as DB_NAME  # named where cold paths read it

# 4: checksums of vectors.f32, vectors.ids and vectors.words in index_meta
# 5: transcript turns: chunks.context (an FTS5 column), turn, speaker, time, session
# 6: indexes on lower(speaker) and time, for the --speaker / --since / --until filters
# 7: token_df, the token weights fitted to the corpus (vouch.embed.fitted)
# 8: term_instances and instances_gone, FTS5's instances kept as arrays (lexical.instances)
SCHEMA_VERSION = 8
# The version of vouch/index/chunking.py's output: bump it whenever the chunks made of
# the same files change; an index built with another rebuilds. Kept here, beside the
# schema version, so opening an index to search does not import the chunker.
CHUNKER_VERSION = "6"  # 5: a transcript is one chunk per turn; 6: a turn's section is its day
IN_BATCH = 500  # values per `IN (...)`: well under SQLite's cap on bound parameters

T = TypeVar("T")

# Keys every usable index has; a missing one means corrupt (rebuild).
REQUIRED_META = (
    "schema_version",
    "tokenizer",
    "source_hash",
    "kb_path",
    "embedding_model",
    "embedding_dims",
    "chunker_version",
    "vector_sha256",
    "indexed_at",
    "corpus_revision",
    "lexical",
    "tree",
    "dirty",
    "vector_rows",
    "hnsw_size",
    "counts",
)
# The recorded checksum of each derived file beside search.db (vectors.hnsw's is
# `vector_sha256`), required from schema 4 on: an older index is stale, not corrupt.
CHECKSUM_META = {
    vectors.MATRIX: "matrix_checksum",
    vectors.IDS: "ids_checksum",
    vectors.WORDPIECE: "words_checksum",
}
CHECKSUMS_SINCE = 4
# The token weights' fit (vouch.index.fitting), required from schema 7 on.
FIT_META = ("fit_texts", "fit_vocab", "fit_chunks")
FIT_SINCE = 7
INSTANCES_SINCE = 8


class Corrupt(Exception):
    """The index cannot be trusted; the message says why (for `vouch index status`)."""


def in_batches(values: Sequence[T]) -> Iterator[tuple[Sequence[T], str]]:
    """`values` in slices of IN_BATCH, each with its `?,?,...` for an `IN (...)` clause."""
    for start in range(0, len(values), IN_BATCH):
        part = values[start : start + IN_BATCH]
        yield part, ",".join("?" * len(part))


_TOKENIZER: list[str] = []


def tokenizer_preference() -> str:
    """`porter unicode61` where this SQLite has the porter stemmer, else `unicode61`."""
    if not _TOKENIZER:
        probe = sqlite3.connect(":memory:")
        try:
            probe.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
            _TOKENIZER.append("porter unicode61")
        except sqlite3.Error:
            _TOKENIZER.append("unicode61")
        finally:
            probe.close()
    return _TOKENIZER[0]


def _ddl(tokenizer: str) -> str:
    return f"""
CREATE TABLE index_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE docs (
    doc_key TEXT PRIMARY KEY,      -- kind:id
    kind TEXT NOT NULL,
    object_id TEXT NOT NULL,
    path TEXT NOT NULL,            -- repository-relative path of the object's file
    title TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT '',
    format TEXT NOT NULL DEFAULT '',
    locator TEXT,
    n_chunks INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    doc_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    object_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    total_chunks INTEGER NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    section TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT '',
    format TEXT NOT NULL DEFAULT '',
    path TEXT NOT NULL,
    page INTEGER,
    start_line INTEGER,
    end_line INTEGER,
    vec_row INTEGER,
    context TEXT NOT NULL DEFAULT '',
    turn INTEGER,
    speaker TEXT,
    time TEXT,
    session INTEGER
);
CREATE INDEX chunks_turn ON chunks(doc_key, turn) WHERE turn IS NOT NULL;
CREATE INDEX chunks_speaker ON chunks(lower(speaker));
CREATE INDEX chunks_time ON chunks(time) WHERE time IS NOT NULL;
CREATE INDEX chunks_doc ON chunks(doc_key);
CREATE INDEX chunks_kind ON chunks(kind);
CREATE UNIQUE INDEX chunks_vec ON chunks(vec_row) WHERE vec_row IS NOT NULL;
CREATE TABLE doc_tags (doc_key TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (tag, doc_key))
    WITHOUT ROWID;
CREATE INDEX doc_tags_doc ON doc_tags(doc_key);
CREATE TABLE headings (
    id INTEGER PRIMARY KEY,
    doc_key TEXT NOT NULL,
    object_id TEXT NOT NULL,
    path TEXT NOT NULL,
    text TEXT NOT NULL,
    level INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL
);
CREATE INDEX headings_text ON headings(text COLLATE NOCASE);
CREATE INDEX headings_doc ON headings(doc_key);
-- vector rows that no chunk uses any more (reused before the matrix grows)
CREATE TABLE vec_free (vec_row INTEGER PRIMARY KEY);
-- vector rows changed since vectors.hnsw was written; applied when it is loaded
CREATE TABLE vec_dirty (vec_row INTEGER PRIMARY KEY);
-- each token's number of embedded texts when the vectors are fitted (vouch.index.fitting)
CREATE TABLE token_df (token INTEGER PRIMARY KEY, df INTEGER NOT NULL);
-- each term's FTS5 instances, one blob a term and write (vouch.index.lexical.instances)
CREATE TABLE term_instances (
    term TEXT NOT NULL, part INTEGER NOT NULL, instances BLOB NOT NULL, PRIMARY KEY (term, part)
) WITHOUT ROWID;
CREATE TABLE instances_gone (id INTEGER PRIMARY KEY, part INTEGER NOT NULL);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    title, section, text, context, content='chunks', content_rowid='id', tokenize='{tokenizer}'
);
"""


def _triggers() -> str:
    return """
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, title, section, text, context)
    VALUES (new.id, new.title, new.section, new.text, new.context);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, title, section, text, context)
    VALUES ('delete', old.id, old.title, old.section, old.text, old.context);
END;
CREATE TRIGGER chunks_au AFTER UPDATE OF title, section, text, context ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, title, section, text, context)
    VALUES ('delete', old.id, old.title, old.section, old.text, old.context);
    INSERT INTO chunks_fts(rowid, title, section, text, context)
    VALUES (new.id, new.title, new.section, new.text, new.context);
END;
"""


def connect(path: Path, *, create: bool = False) -> sqlite3.Connection:
    """A connection in WAL mode. Without `create`, a missing file is Corrupt, not created."""
    if not create and not path.is_file():
        raise Corrupt(f"{path.name} is missing")
    try:
        conn = sqlite3.connect(
            str(path), timeout=10.0, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        raise Corrupt(f"{path.name} is not a readable SQLite database: {exc}") from exc
    return conn


def create_schema(conn: sqlite3.Connection, tokenizer: str) -> None:
    """Tables only: a full build fills `chunks` first and then the FTS table in one pass
    (`finish_schema`), which is faster than a trigger per row."""
    conn.executescript(_ddl(tokenizer))


def finish_schema(conn: sqlite3.Connection) -> None:
    """Index every chunk in FTS5 at once, then add the triggers that keep it in sync."""
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
    for statement in _triggers().split("\nEND;"):
        if statement.strip():
            conn.execute(statement + "\nEND;")  # not executescript: it would COMMIT


class Meta:
    """`index_meta`, parsed. Every field is present once validation passed. A Meta
    never changes: what is derived from it is worked out once (`derived`)."""

    __slots__ = ("_derived", "values")

    def __init__(self, values: dict[str, str]):
        self.values = values
        self._derived: dict[str, object] = {}

    def derived(self, name: str, make: Callable[[Meta], T]) -> T:
        """`make(self)`, made once per Meta and kept under `name`."""
        if name not in self._derived:
            self._derived[name] = make(self)
        return cast(T, self._derived[name])

    def __getitem__(self, key: str) -> str:
        return self.values[key]

    @property
    def schema_version(self) -> int:
        return int(self.values["schema_version"])

    @property
    def vector_rows(self) -> int:
        return int(self.values["vector_rows"])

    @property
    def dims(self) -> int:
        return int(self.values["embedding_dims"])

    @property
    def hnsw_size(self) -> int:
        return int(self.values["hnsw_size"])

    @property
    def graph_size(self) -> int | None:
        """vectors.hnsw's recorded size; None when the index has no graph."""
        return None if self.values["vector_sha256"] == NO_GRAPH else self.hnsw_size

    @property
    def checksums(self) -> dict[str, str] | None:
        """The recorded checksum of each file (by name); None for an index older than
        checksums (stale by its schema_version, so it is rebuilt, not verified)."""
        if self.schema_version < CHECKSUMS_SINCE:
            return None
        return {name: self.values[key] for name, key in CHECKSUM_META.items()}


def read_meta(conn: sqlite3.Connection) -> Meta:
    """Parse and check `index_meta`; any failure is Corrupt."""
    try:
        rows = conn.execute("SELECT key, value FROM index_meta").fetchall()
    except sqlite3.Error as exc:
        raise Corrupt(f"index_meta is unreadable: {exc}") from exc
    values = {str(k): str(v) for k, v in rows if v is not None}
    missing = [k for k in REQUIRED_META if k not in values]
    if missing:
        raise Corrupt("index_meta lacks " + ", ".join(missing))
    meta = Meta(values)
    try:
        meta.schema_version  # noqa: B018 - parse check
        meta.vector_rows  # noqa: B018
        meta.dims  # noqa: B018
        meta.hnsw_size  # noqa: B018
    except ValueError as exc:
        raise Corrupt(f"index_meta holds an unparsable number: {exc}") from exc
    if meta.schema_version >= CHECKSUMS_SINCE:
        missing = [k for k in CHECKSUM_META.values() if k not in values]
        if missing:
            raise Corrupt("index_meta lacks " + ", ".join(missing))
    if meta.schema_version >= FIT_SINCE:
        missing = [k for k in FIT_META if k not in values]
        if missing:
            raise Corrupt("index_meta lacks " + ", ".join(missing))
        try:
            [int(values[k]) for k in FIT_META]
        except ValueError as exc:
            raise Corrupt(f"index_meta holds an unparsable number: {exc}") from exc
    return meta


def write_meta(conn: sqlite3.Connection, values: dict[str, object]) -> None:
    conn.executemany(
        "INSERT INTO index_meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [(k, str(v)) for k, v in values.items()],
    )


def quick_check(conn: sqlite3.Connection, meta: Meta) -> None:
    """Touch every table the queries use, so a damaged file fails here, not mid-search
    (an index older than a table is stale by its schema_version, not damaged)."""
    tables = ["docs", "chunks", "doc_tags", "headings", "vec_free", "vec_dirty"]
    if meta.schema_version >= FIT_SINCE:
        tables.append("token_df")
    if meta.schema_version >= INSTANCES_SINCE:
        tables += ["term_instances", "instances_gone"]
    try:
        for table in tables:
            conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchall()
        conn.execute("SELECT rowid FROM chunks_fts LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        raise Corrupt(f"search.db is damaged: {exc}") from exc
