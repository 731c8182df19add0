"""Heading sections of a text document, for the markups people write documentation in.

One function per markup, one shape out (`Section`): markdown (ATX `## Title` and setext
`Title` over `===` / `---`), reStructuredText (titles underlined, or over- and
underlined, with any punctuation; levels in order of first use, as docutils assigns
them), AsciiDoc (`== Title`), man pages as text (`NAME`, `SEE ALSO` at the margin; `SS`
subsections indented three spaces) and as troff (`.SH`, `.SS`). Headings inside code
fences and literal blocks are not headings. `Section.heading` is the name search prints
(`§Timeouts`) and `vouch show --section` takes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from typing import NamedTuple


class Section(NamedTuple):
    """One heading's section of a markdown text, with where it starts and ends."""

    heading: str  # "" for text before the first heading
    level: int  # 0 for text before the first heading
    start_line: int  # 1-based line where the heading's markup starts (or the first line)
    end_line: int  # 1-based line of the next heading of any level, or EOF+1
    text: str
    body_line: int = 0  # 1-based first line after the heading's markup (0: start_line)


Mark = tuple[int, int, str, int]  # (line index, level, heading, lines of markup)


class _Patterns:
    """The regular expressions, compiled on first use: importing this module (every
    command imports the page kind) costs no compiling."""

    @cached_property
    def atx(self) -> re.Pattern[str]:
        return re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*(?:[ \t]#+)?[ \t]*$")

    @cached_property
    def fence(self) -> re.Pattern[str]:
        return re.compile(r"^\s*(```|~~~)")

    @cached_property
    def setext(self) -> re.Pattern[str]:
        return re.compile(r"^ {0,3}(=+|-+)[ \t]*$")

    @cached_property
    def list_or_quote(self) -> re.Pattern[str]:
        return re.compile(r"^\s*(?:[-*+>]|\d+[.)])(?:\s|$)")

    @cached_property
    def rst_adorn(self) -> re.Pattern[str]:
        return re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")

    @cached_property
    def adoc(self) -> re.Pattern[str]:
        return re.compile(r"^(={1,6})[ \t]+(\S.*?)[ \t]*$")

    @cached_property
    def adoc_block(self) -> re.Pattern[str]:
        return re.compile(r"^(-{4,}|\.{4,}|={4,}|\+{4,}|\*{4,}|_{4,}|/{4,}|```.*)[ \t]*$")

    @cached_property
    def man_title(self) -> re.Pattern[str]:
        return re.compile(r"^[A-Z][A-Z0-9 ,/&()-]*[A-Z0-9)]$|^[A-Z]$")

    @cached_property
    def man_sub(self) -> re.Pattern[str]:
        return re.compile(r"^ {3}(\S.{0,70})$")

    @cached_property
    def troff(self) -> re.Pattern[str]:
        return re.compile(r"^\.(SH|SS)(?:[ \t]+(.*))?$")

    @cached_property
    def underlined(self) -> re.Pattern[str]:
        return re.compile(r"^[^\s].*\n([!-/:-@\[-`{-~])\1{2,}[ \t]*$", re.MULTILINE)


_R = _Patterns()

MAN_SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SEE ALSO")


def _build(lines: list[str], marks: list[Mark]) -> list[Section]:
    out: list[Section] = []
    starts: list[Mark] = [(0, 0, "", 0)] if not marks or marks[0][0] > 0 else []
    bounds = starts + marks
    for n, (i, level, heading, size) in enumerate(bounds):
        end = bounds[n + 1][0] if n + 1 < len(bounds) else len(lines)
        text = "\n".join(lines[i:end]).strip()
        if text or heading:
            out.append(Section(heading, level, i + 1, end + 1, text, i + 1 + size))
    return out


def _plain(text: str) -> str:
    """A heading's text on one line, its runs of spaces collapsed."""
    return " ".join(text.split())


def markdown(text: str) -> list[Section]:
    """ATX and setext headings, ignoring code fences (CommonMark's rules, simplified: a
    setext title is the one line of text right above its underline)."""
    lines = text.split("\n")
    marks: list[Mark] = []
    in_fence = False
    for i, line in enumerate(lines):
        if _R.fence.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _R.atx.match(line)
        if m:
            marks.append((i, len(m.group(1)), _plain(m.group(2).strip()), 1))
            continue
        if i and _R.setext.match(line):
            title = lines[i - 1]
            before = lines[i - 2] if i > 1 else ""
            if (
                title.strip()
                and not title.startswith(("    ", "\t"))
                and not _R.list_or_quote.match(title)
                and not _R.setext.match(title)
                and not before.strip()
                and not (marks and marks[-1][0] == i - 1)
            ):
                level = 1 if line.strip()[0] == "=" else 2
                marks.append((i - 1, level, _plain(title.strip()), 2))
    return _build(lines, marks)


def rst(text: str) -> list[Section]:
    """reStructuredText section titles: underlined, or over- and underlined alike."""
    lines = text.split("\n")
    marks: list[Mark] = []
    styles: list[tuple[str, bool]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        over = _R.rst_adorn.match(line)
        if (
            over
            and i + 2 < len(lines)
            and lines[i + 1].strip()
            and lines[i + 2].rstrip() == line.rstrip()
            and (i == 0 or not lines[i - 1].strip())
        ):
            style = (over.group(1), True)
            marks.append((i, _level(styles, style), _plain(lines[i + 1].strip()), 3))
            i += 3
            continue
        under = _R.rst_adorn.match(lines[i + 1]) if i + 1 < len(lines) else None
        if (
            under
            and line.strip()
            and not line[0].isspace()
            and not _R.rst_adorn.match(line)
            and (i == 0 or not lines[i - 1].strip())
            and len(lines[i + 1].rstrip()) >= min(len(line.rstrip()), 4)
        ):
            style = (under.group(1), False)
            marks.append((i, _level(styles, style), _plain(line.strip()), 2))
            i += 2
            continue
        i += 1
    return _build(lines, marks)


def _level(styles: list[tuple[str, bool]], style: tuple[str, bool]) -> int:
    if style not in styles:
        styles.append(style)
    return styles.index(style) + 1


def asciidoc(text: str) -> list[Section]:
    """`= Document title`, `== Section` ... `====== Level 5`, outside delimited blocks
    (listing `----`, literal `....`, examples, sidebars, passthroughs, comments)."""
    lines = text.split("\n")
    marks: list[Mark] = []
    block: str | None = None
    for i, line in enumerate(lines):
        fence = _R.adoc_block.match(line)
        if fence:
            delimiter = line.strip()
            if block is None:
                block = delimiter
            elif delimiter == block or (block.startswith("```") and delimiter == "```"):
                block = None
            continue
        if block is not None:
            continue
        m = _R.adoc.match(line)
        if m:
            marks.append((i, len(m.group(1)), _plain(m.group(2)), 1))
        elif line.startswith("#"):
            md = _R.atx.match(line)
            if md:
                marks.append((i, len(md.group(1)), _plain(md.group(2).strip()), 1))
    return _build(lines, marks)


def man(text: str) -> list[Section]:
    """A man page as text (`man ls | col -b`): section names in capitals at the margin,
    subsections indented three spaces above text indented further."""
    lines = text.split("\n")
    marks: list[Mark] = []
    for i, line in enumerate(lines):
        if _R.man_title.match(line) and len(line) <= 40:
            marks.append((i, 1, line.strip(), 1))
            continue
        sub = _R.man_sub.match(line)
        if sub and marks and not lines[i - 1].strip():
            follow = next((x for x in lines[i + 1 : i + 3] if x.strip()), "")
            indent = len(follow) - len(follow.lstrip(" "))
            if indent >= 5 and not sub.group(1).rstrip().endswith((".", ",", ";", ":")):
                marks.append((i, 2, sub.group(1).strip(), 1))
    return _build(lines, marks)


def troff(text: str) -> list[Section]:
    """A man page's troff source: `.SH NAME`, `.SS "Sub section"`."""
    lines = text.split("\n")
    marks: list[Mark] = []
    for i, line in enumerate(lines):
        m = _R.troff.match(line)
        if m:
            title = (m.group(2) or "").strip().strip('"')
            if not title and i + 1 < len(lines):
                title = lines[i + 1].strip()  # `.SH` alone: the title is the next line
            marks.append((i, 1 if m.group(1) == "SH" else 2, title, 1))
    return _build(lines, marks)


def looks_like_man(text: str) -> bool:
    """Rendered man-page text: a NAME section and one more of the usual ones."""
    if "\nNAME\n" not in text and not text.startswith("NAME\n"):
        return False
    return any(f"\n{name}\n" in text for name in MAN_SECTIONS[1:])


def text_markup(text: str) -> str | None:
    """The markup of a text file that no name suffix declares (Sphinx and Django keep
    reStructuredText in `.txt`; `man ls > ls.txt`), or None for plain text."""
    if looks_like_man(text):
        return "man"
    if _R.underlined.search(text) and any(s.heading for s in rst(text)):
        return "rst"
    return None


MARKUPS: dict[str, Callable[[str], list[Section]]] = {
    "markdown": markdown,
    "rst": rst,
    "asciidoc": asciidoc,
    "man": man,
    "troff": troff,
}
MARKUP_SUFFIXES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".rest": "rst",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".asc": "asciidoc",
    **{f".{n}": "troff" for n in range(1, 10)},
    ".man": "troff",
}


def sections(text: str, markup: str) -> list[Section]:
    return MARKUPS[markup](text)


def without_heading(text: str) -> str:
    """A section's text after its heading's markup (title, under- and overlines)."""
    lines = text.split("\n")
    if not lines:
        return text
    drop = 1
    if _R.rst_adorn.match(lines[0]) and len(lines) > 2:
        drop = 3  # overline, title, underline
    elif len(lines) > 1 and (_R.setext.match(lines[1]) or _R.rst_adorn.match(lines[1])):
        drop = 2
    return "\n".join(lines[drop:]).strip()


TITLED = frozenset({"markdown", "rst", "asciidoc"})
TITLE_MAX = 200
_TITLE_SCAN = 64 * 1024  # a document's title is near its top


def document_title(content: bytes, suffix: str) -> str | None:
    """A document's own title — its first heading, when that is a top-level one
    (markdown `# Title`, the first reStructuredText title, AsciiDoc `= Title`) — for a
    markup its name suffix declares (or reStructuredText in a `.txt`); else None."""
    text = content[:_TITLE_SCAN].decode("utf-8", "replace")
    markup = MARKUP_SUFFIXES.get(suffix.lower())
    if markup is None and suffix.lower() in ("", ".txt"):
        markup = text_markup(text)
    if markup not in TITLED:
        return None
    first = next((s for s in sections(text, markup) if s.heading), None)
    if first is None or first.level != 1:
        return None
    return first.heading[:TITLE_MAX].strip() or None
