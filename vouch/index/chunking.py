"""Turning knowledge files into searchable chunks.

Claims, entities and relations are one chunk each (their kind modules say how). A page
is one chunk per heading section; a section longer than a window is split into
overlapping windows. Source content is split by headings (markdown), by paragraph
windows (text and code), page by page (PDF, so hits carry their `page`), or turn by
turn (a transcript: each turn with its neighbours as context, `transcript_pieces`).

Bump `store.CHUNKER_VERSION` whenever the output for the same files changes: the index records
it and a mismatch rebuilds.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from vouch.core import headings
from vouch.kinds import KINDS, Chunk, Obj, module_for
from vouch.kinds import page as page_kind
from vouch.kinds import source as source_kind
from vouch.kinds.base import REDACTED, redacted

# 2: relations carry their relation type as `type`; 3: invalid files are left out;
# 4: sections of setext markdown, reStructuredText, AsciiDoc and man pages
# 5: transcripts turn by turn
WINDOW_WORDS = 250  # a window is at most this many words ...
OVERLAP_WORDS = 40  # ... and repeats this many from the previous one

INDEXED_KINDS = ("claim", "entity", "relation", "page", "source")
_SNIFF = 8192

_CODE = (
    ".py .pyi .js .jsx .ts .tsx .go .rs .java .kt .c .h .cc .cpp .hpp .cs .rb .php "
    ".swift .scala .sh .bash .zsh .sql .lua .r .m .pl .hs .ex .exs .clj .yaml .yml .toml "
    ".json .ini .cfg .mk .cmake .proto .graphql .css .scss .html .xml .vue .svelte .tf"
)
CODE_EXTENSIONS = frozenset(_CODE.split(" "))
MARKDOWN_EXTENSIONS = frozenset(s for s, m in headings.MARKUP_SUFFIXES.items() if m == "markdown")


@dataclass(frozen=True)
class Heading:
    text: str
    level: int
    start_line: int  # 1-based (page bodies: lines of the body)
    end_line: int  # the next heading's line, or EOF+1


@dataclass
class Doc:
    """Everything the index stores about one object."""

    kind: str
    object_id: str
    path: str  # .vouch-relative path of its main file
    title: str = ""
    type: str = ""
    status: str = ""
    format: str = ""
    locator: str | None = None
    tags: tuple[str, ...] = ()
    chunks: list[Chunk] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    problem: str | None = None  # why its content could not be read (indexed without it)

    @property
    def key(self) -> str:
        return doc_key(self.kind, self.object_id)


def doc_key(kind: str, object_id: str) -> str:
    return f"{kind}:{object_id}"


def doc_for_path(rel: str) -> tuple[str, str] | None:
    """(kind, id) of the indexed object a `.vouch`-relative path belongs to, else None."""
    parts = rel.split("/")
    top = parts[0]
    if top == "sources":
        if (
            len(parts) == 4
            and len(parts[2]) == 64
            and (parts[3] == "meta.yaml" or source_kind.is_content_name(parts[3]))
        ):
            return "source", parts[2]
        return None
    for name in ("claim", "entity", "relation", "page"):
        kind = KINDS[name]
        if top == kind.directory and len(parts) == 3 and parts[2].endswith(kind.ext):
            return name, parts[2][: -len(kind.ext)]
    return None


# -- objects -----------------------------------------------------------------------------
def object_doc(kind: str, obj: Obj, path: str, labels: dict[str, str] | None = None) -> Doc:
    """The doc of a claim, entity, relation or page."""
    k = KINDS[kind]
    if kind == "page":
        chunks, headings = page_chunks(obj)
    elif kind == "relation":
        chunks, headings = module_for(kind).chunks(obj, labels=labels), []
    else:
        chunks, headings = module_for(kind).chunks(obj), []
    return Doc(
        kind=kind,
        object_id=str(obj["id"]),
        path=path,
        title=k.title_of(obj),
        type=str(obj.get(k.type_field) or "") if k.type_field else "",
        status=REDACTED if redacted(k, obj) else str(obj.get("status") or ""),
        format="markdown" if kind == "page" else "note",
        tags=tuple(obj.get("tags") or ()),
        chunks=chunks,
        headings=headings,
    )


def page_chunks(obj: Obj) -> tuple[list[Chunk], list[Heading]]:
    body = str(obj.get("body") or "")
    secs = page_kind.sections(body) or [page_kind.Section("", 0, 1, 1, "")]
    title = str(obj.get("title") or "")
    pieces: list[tuple[page_kind.Section, str]] = []
    for sec in secs:
        text = sec.text if sec.heading else f"{title}\n\n{sec.text}".strip()
        pieces.extend((sec, window) for window in word_windows(text))
    chunks = [
        page_kind.KIND.chunk(
            obj,
            text,
            chunk_index=n,
            total_chunks=len(pieces),
            section=sec.heading,
            start_line=sec.start_line,
            end_line=sec.end_line,
            heading_level=sec.level or None,
        )
        for n, (sec, text) in enumerate(pieces)
    ]
    return chunks, _headings(secs)


def _headings(secs: list[page_kind.Section]) -> list[Heading]:
    return [Heading(s.heading, s.level, s.start_line, s.end_line) for s in secs if s.heading]


# -- windows -----------------------------------------------------------------------------
def word_windows(text: str, size: int = WINDOW_WORDS, overlap: int = OVERLAP_WORDS) -> list[str]:
    """`text` itself when short; else windows of `size` words overlapping by `overlap`."""
    words = text.split()
    if len(words) <= size:
        return [text]
    step = max(1, size - overlap)
    out = []
    for start in range(0, len(words), step):
        out.append(" ".join(words[start : start + size]))
        if start + size >= len(words):
            break
    return out


@dataclass(frozen=True)
class Block:
    start_line: int
    end_line: int  # inclusive
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


def paragraphs(text: str, first_line: int = 1) -> list[Block]:
    """Runs of non-blank lines, with their 1-based line numbers."""
    out: list[Block] = []
    current: list[str] = []
    start = first_line
    for n, line in enumerate(text.split("\n"), first_line):
        if line.strip():
            if not current:
                start = n
            current.append(line)
        elif current:
            out.append(Block(start, n - 1, "\n".join(current)))
            current = []
    if current:
        out.append(Block(start, start + len(current) - 1, "\n".join(current)))
    return out


def paragraph_windows(
    blocks: list[Block], size: int = WINDOW_WORDS, overlap: int = OVERLAP_WORDS
) -> list[Block]:
    """Pack paragraphs into windows of about `size` words.

    A window starts with the previous window's last paragraph when that is short
    (≤ `overlap` words), so a passage cut at a boundary is still found whole; a paragraph
    longer than a window is split into overlapping word windows.
    """
    out: list[Block] = []
    pending: list[Block] = []

    def flush() -> None:
        if pending:
            out.append(
                Block(
                    pending[0].start_line,
                    pending[-1].end_line,
                    "\n\n".join(b.text for b in pending),
                )
            )

    for block in blocks:
        if block.words > size:
            flush()
            pending = []
            out.extend(
                Block(block.start_line, block.end_line, w)
                for w in word_windows(block.text, size, overlap)
            )
            continue
        if pending and sum(b.words for b in pending) + block.words > size:
            flush()
            tail = pending[-1]
            pending = [tail] if tail.words <= overlap and tail.words + block.words <= size else []
        pending.append(block)
    flush()
    return out


# -- sources -----------------------------------------------------------------------------
def source_format(meta: Obj, content: bytes) -> str:
    """pdf, a markup with sections (markdown, rst, asciidoc, troff, man), code or text —
    or `binary` for content we do not read."""
    media = str(meta.get("media_type") or "")
    locator = str(meta.get("locator") or "")
    suffix = PurePosixPath(locator.split("?", 1)[0]).suffix.lower()
    if meta.get("type") == "pdf" or media == "application/pdf" or content[:5] == b"%PDF-":
        return "pdf"
    if b"\0" in content[:_SNIFF]:
        return "binary"
    if meta.get("type") == "transcript":
        return "transcript"
    markup = headings.MARKUP_SUFFIXES.get(suffix)
    if markup is not None:
        return markup
    if media in ("text/markdown", "text/x-markdown"):
        return "markdown"
    if suffix in CODE_EXTENSIONS or media.startswith(("text/x-", "application/x-")):
        return "code"
    return headings.text_markup(content.decode("utf-8", "replace")) or "text"


def source_doc(meta: Obj, content: bytes | None, path: str) -> Doc:
    """A source's doc: its content chunked by format, or one chunk naming it."""
    fmt = source_format(meta, content or b"") if content is not None else "binary"
    title = source_kind.KIND.title_of(meta)
    doc = Doc(
        kind="source",
        object_id=str(meta["id"]),
        path=path,
        title=title,
        type=str(meta.get("type") or ""),
        status=source_kind.status_of(meta),
        format=fmt,
        locator=str(meta.get("locator") or ""),
        tags=tuple(meta.get("tags") or ()),
    )
    pieces: list[dict[str, object]] = []
    if content is not None and fmt == "pdf":
        pieces, doc.problem = _pdf_pieces(content)
    elif content is not None and fmt == "transcript":
        pieces, doc.problem = transcript_pieces(content)
        if doc.problem is not None:  # read as text, like any document
            doc.format = "text"
            text = content.decode("utf-8", errors="replace")
            pieces = [
                {"text": b.text, "start_line": b.start_line, "end_line": b.end_line}
                for b in paragraph_windows(paragraphs(text))
            ]
            doc.problem = None
    elif content is not None and fmt != "binary":
        text = content.decode("utf-8", errors="replace")
        if fmt in headings.MARKUPS:
            pieces, doc.headings = _sectioned_pieces(text, fmt)
        else:
            pieces = [
                {"text": b.text, "start_line": b.start_line, "end_line": b.end_line}
                for b in paragraph_windows(paragraphs(text))
            ]
    pieces = [p for p in pieces if str(p["text"]).strip()]
    if not pieces:  # unreadable or empty: still findable by its title and locator
        pieces = [{"text": f"{title}\n{meta.get('locator') or ''}".strip()}]
    total = len(pieces)
    doc.chunks = [
        source_kind.KIND.chunk(
            meta,
            str(p["text"]),
            chunk_index=n,
            total_chunks=total,
            section=str(p.get("section") or ""),
            page=p.get("page"),
            start_line=p.get("start_line"),
            end_line=p.get("end_line"),
            heading_level=p.get("level"),
            **{k: p[k] for k in _TURN_FIELDS if k in p},
        )
        for n, p in enumerate(pieces)
    ]
    return doc


_TURN_FIELDS = ("turn", "speaker", "time", "session", "context", "window")
CONTEXT_TURNS = 1  # neighbours on each side a turn is indexed and embedded with


def transcript_pieces(content: bytes) -> tuple[list[dict[str, object]], str | None]:
    """One piece per turn: `Speaker: text` as its text; the neighbouring turns of the
    same session (never across a session boundary) as its `context` column; the turn
    and its neighbours without speakers as the text of its vector (LoCoMo, measured in
    research/search-calibration-locomo.md: the neighbours are the strongest lever, and
    speaker names only blur a window's vector). A turn's `section` is the day it was said
    in words (`8 May 2023`, from its own time or its session's date; "" without one): a
    question names a day that way ("what did Ann say on 8 May?", "in June 2023") and
    only a session's header holds it (LoCoMo, one knowledge base, conversations 1-5:
    R@10 78.4 → 80.5; bench/RESULTS.md, issue 35)."""
    from vouch.core.transcripts import TranscriptError, parse_content

    try:
        turns = parse_content(content).turns
    except TranscriptError as exc:
        return [], f"it does not read as a transcript ({exc})"
    pieces: list[dict[str, object]] = []
    for i, t in enumerate(turns):
        lo = max(0, i - CONTEXT_TURNS)
        near = [
            u for u in turns[lo : i + CONTEXT_TURNS + 1] if u.session == t.session and u is not t
        ]
        before = [u.text for u in near if u.number < t.number]
        after = [u.text for u in near if u.number > t.number]
        pieces.append(
            {
                "text": t.said,
                "section": t.day,
                "start_line": t.line,
                "end_line": t.end_line,
                "turn": t.number,
                "speaker": t.speaker,
                "time": t.time,
                "session": t.session,
                "context": "\n".join(u.said for u in near),
                "window": (*before, t.text, *after),
            }
        )
    return pieces, None


def vector_parts(chunk: Chunk) -> tuple[str, ...]:
    """What a chunk's vector is made of, as texts joined by newlines
    (`Embedder.encode_joined`): a turn's window, else its text."""
    return chunk.window or (chunk.text,)


def _sectioned_pieces(text: str, markup: str) -> tuple[list[dict[str, object]], list[Heading]]:
    pieces: list[dict[str, object]] = []
    secs = headings.sections(text, markup)
    lines = text.split("\n")
    for sec in secs:
        # the section's own lines (not its stripped text), so line numbers stay exact
        raw = "\n".join(lines[sec.start_line - 1 : sec.end_line - 1])
        blocks = paragraphs(raw, sec.start_line)
        for window in paragraph_windows(blocks):
            pieces.append(
                {
                    "text": window.text,
                    "section": sec.heading,
                    "start_line": window.start_line,
                    "end_line": window.end_line,
                    "level": sec.level or None,
                }
            )
    return pieces, _headings(secs)


_PDF_SPACES = re.compile(r"[ \t]+")


def _pdf_pieces(content: bytes) -> tuple[list[dict[str, object]], str | None]:
    """Text of each PDF page (1-based `page`), split into windows, and why there is
    none when pypdf cannot extract any."""
    # pypdf logs what it finds wrong ("EOF marker not found") through `logging`, which
    # with no handler prints it on stderr, in the middle of a command's output: what
    # matters reaches the caller as the reason below
    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL + 1)
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(content))
        texts = [(n, page.extract_text() or "") for n, page in enumerate(reader.pages, 1)]
    except Exception as exc:  # pypdf raises many types for damaged files
        return [], f"pypdf cannot read it ({type(exc).__name__}: {exc})"
    finally:
        quiet.setLevel(level)
    pieces: list[dict[str, object]] = []
    for number, raw in texts:
        text = _PDF_SPACES.sub(" ", raw)
        for window in paragraph_windows(paragraphs(text)):
            pieces.append({"text": window.text, "page": number})
    if not any(str(p["text"]).strip() for p in pieces):
        return [], f"no text in its {len(texts)} page(s) (scanned images?)"
    return pieces, None
