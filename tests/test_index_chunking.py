"""Chunking: one chunk per small object, heading sections for markdown, windows for long
text, pages for PDFs — and what the index records about each chunk."""

from __future__ import annotations

from index_support import claim, commit, ids_of

from vouch.index import Filters, Index, chunking
from vouch.kinds import page as page_kind
from vouch.store import sources
from vouch.store.kb import KB


def tiny_pdf(pages: list[str]) -> bytes:
    """A valid PDF with one line of Helvetica text per page (offsets computed)."""
    objects = {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        3: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    kids = []
    for n, text in enumerate(pages):
        page_no, content_no = 4 + 2 * n, 5 + 2 * n
        kids.append(f"{page_no} 0 R")
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET"
        objects[page_no] = (
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_no} 0 R >>"
        )
        objects[content_no] = f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream"
    objects[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>"
    out = b"%PDF-1.4\n"
    offsets = []
    for n in sorted(objects):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{objects[n]}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode()
    return out


def test_doc_for_path() -> None:
    sha = "ab" * 32
    assert chunking.doc_for_path(f"sources/ab/{sha}/content") == ("source", sha)
    assert chunking.doc_for_path(f"sources/ab/{sha}/meta.yaml") == ("source", sha)
    assert chunking.doc_for_path("claims/12/x-12345678.yaml") == ("claim", "x-12345678")
    assert chunking.doc_for_path("pages/12/x-12345678.md") == ("page", "x-12345678")
    for other in (
        "config.yaml",
        "audit.log.jsonl",
        "evidence/12/e-12345678.yaml",
        "decided/20260101-000000-12345678.yaml",
        "claims/12/x-12345678.md",
    ):
        assert chunking.doc_for_path(other) is None


def test_page_sections_headings_and_windows() -> None:
    long = " ".join(f"word{n}" for n in range(600))
    obj = page_kind.new(title="Guide", body=f"Intro text.\n\n# One\n\nAlpha.\n\n## Two\n\n{long}\n")
    doc = chunking.object_doc("page", obj, ".vouch/pages/x.md")
    sections = [c.section for c in doc.chunks]
    assert sections[:2] == ["", "One"] and set(sections[2:]) == {"Two"}
    assert len(sections) > 3  # the long section became overlapping windows
    assert all(c.total_chunks == len(doc.chunks) for c in doc.chunks)
    assert [c.chunk_index for c in doc.chunks] == list(range(len(doc.chunks)))
    windows = [c.text.split() for c in doc.chunks if c.section == "Two"]
    assert windows[0][-chunking.OVERLAP_WORDS :] == windows[1][: chunking.OVERLAP_WORDS]
    assert [(h.text, h.level) for h in doc.headings] == [("One", 1), ("Two", 2)]
    assert doc.headings[0].end_line == doc.headings[1].start_line


def test_paragraph_windows_keep_line_numbers() -> None:
    text = "first para\nline two\n\n\nsecond para\n\n" + "\n\n".join(
        " ".join(f"w{p}x{n}" for n in range(100)) for p in range(6)
    )
    blocks = chunking.paragraphs(text)
    assert (blocks[0].start_line, blocks[0].end_line) == (1, 2)
    assert (blocks[1].start_line, blocks[1].end_line) == (5, 5)
    windows = chunking.paragraph_windows(blocks)
    assert len(windows) >= 3
    assert all(len(w.text.split()) <= chunking.WINDOW_WORDS for w in windows)
    assert windows[0].start_line == 1


def test_source_formats() -> None:
    meta = {"id": "c" * 64, "locator": "src/app.py", "media_type": "text/x-python"}
    assert chunking.source_format(meta, b"print(1)\n") == "code"
    assert (
        chunking.source_format(
            {**meta, "locator": "notes.md", "media_type": "text/markdown"}, b"# x"
        )
        == "markdown"
    )
    assert (
        chunking.source_format({**meta, "locator": "a.txt", "media_type": "text/plain"}, b"x")
        == "text"
    )
    assert (
        chunking.source_format({**meta, "locator": "a.bin", "media_type": ""}, b"\0\1\2")
        == "binary"
    )
    assert chunking.source_format({**meta, "locator": "a.pdf"}, tiny_pdf(["x"])) == "pdf"


def test_sources_are_indexed_by_page_section_and_line(kb: KB, tmp_path) -> None:
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(tiny_pdf(["Install the widget first", "Calibrate the flux capacitor"]))
    md = tmp_path / "notes.md"
    md.write_text("# Notes\n\nGeneral.\n\n## Backups\n\nBackups run nightly with restic.\n")
    txt = tmp_path / "log.txt"
    txt.write_text("line one\n\nthe quick brown fox\njumps over\n")
    items = [sources.intake_for_path(kb, p) for p in (pdf, md, txt)]
    sources.register_many(kb, items, "Test Person")
    claim(kb, "Backups are verified weekly")
    commit(kb)
    index = Index.open(kb)
    try:
        hit = index.lexical("flux capacitor")
        info = index.chunks([hit[0].chunk_id])[hit[0].chunk_id]
        assert (info.kind, info.format, info.page, info.total_chunks) == ("source", "pdf", 2, 2)
        assert info.locator and info.locator.endswith("manual.pdf")
        assert index.chunks([index.lexical("widget")[0].chunk_id]).popitem()[1].page == 1

        backups = index.lexical("restic")
        info = index.chunks([backups[0].chunk_id]).popitem()[1]
        assert (info.section, info.format) == ("Backups", "markdown")
        assert (info.start_line, info.end_line) == (5, 7)
        assert [h["text"] for h in index.headings(info.id)] == ["Notes", "Backups"]
        assert index.find_section(info.id, "backups")["start_line"] == 5

        fox = index.chunks([index.lexical("fox")[0].chunk_id]).popitem()[1]
        assert (fox.format, fox.start_line, fox.end_line) == ("text", 1, 4)  # one window

        for narrowed in (Filters.of(kinds="claim"), Filters.of(formats="markdown")):
            assert len(ids_of(index, index.lexical("backups", filters=narrowed))) == 1
    finally:
        index.close()
