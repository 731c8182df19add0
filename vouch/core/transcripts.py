"""Transcripts: conversations read turn by turn (issue 19).

A transcript source keeps the bytes it was given; its turns are read from them on
demand, the same way every time, so a turn locator (`T12`, `T12-T14`) is as stable as a
line span. Three formats are read:

- `plain`: "Speaker: text" lines, continuation lines appended to the turn above, and
  header lines that start a session or give its date (`# Session 2 — 8 May 2023`,
  `Session 2: 1:56 pm on 8 May, 2023`, `Date: 2023-05-08`, `--- 2023-05-08 ---`); a turn
  line may begin with its time in brackets (`[2023-05-08 10:32] Ann: ...`).
- `jsonl`: one JSON object a line with `role` or `speaker` (or `author`, `name`),
  `content` or `text` (a string, or a list of `{type: text, text}` blocks), and an
  optional `timestamp` (`time`, `ts`, `date`, `created_at`); a changed `session` (or
  `session_id`, `conversation_id`) starts a new session.
- `claude-code`: Claude Code's session files (`~/.claude/projects/*/*.jsonl`): lines of
  `type` user/assistant with `message.content`; tool calls, tool results, thinking and
  meta lines are noise and are skipped, as are other line types (summaries, snapshots).

Turns are numbered from 1 across the whole transcript. A turn without a time of its own
carries its session's date. Malformed input raises `TranscriptError` naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from vouch.core import safeload

FORMATS = ("plain", "jsonl", "claude-code")
MAX_SPEAKER = 60
_TURN = re.compile(
    r"^(?:\[(?P<time>[^\]\n]{1,40})\]\s*)?(?P<speaker>[^\s:\[#>|*-][^:\n]{0,59}?):\s+(?P<text>\S.*)$"
)
_SESSION = re.compile(r"^(?:#+\s*)?session\b[\s#]*(?P<rest>.*)$", re.IGNORECASE)
_DATE_LINE = re.compile(r"^(?:#+\s*)?date\s*:\s*(?P<rest>.+)$", re.IGNORECASE)
_RULE = re.compile(r"^(?:-{3,}|={3,}|#+)\s*(?P<rest>.*?)\s*(?:-{3,}|={3,})?\s*$")
_ISO = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})(?:[T ](?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?)?"
)
_MONTHS = {
    m: n
    for n, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        1,
    )
    for m in names
}
_DAY_MONTH = re.compile(
    r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?P<mon>[A-Za-z]{3,9})\.?,?\s+(?P<y>\d{4})\b"
)
_MONTH_DAY = re.compile(
    r"\b(?P<mon>[A-Za-z]{3,9})\.?\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})\b"
)
_CLOCK = re.compile(r"\b(?P<h>\d{1,2}):(?P<m>\d{2})(?::\d{2})?\s*(?P<ampm>[ap]\.?m\.?)?", re.I)
_SPEAKER_KEYS = ("role", "speaker", "author", "name", "from", "user")
_TEXT_KEYS = ("content", "text", "message", "body")
_TIME_KEYS = ("timestamp", "time", "ts", "date", "created_at", "datetime")
_SESSION_KEYS = ("session", "session_id", "sessionId", "conversation_id")
_CLAUDE_TYPES = frozenset({"user", "assistant"})
_CLAUDE_OTHER = frozenset(
    {"summary", "system", "file-history-snapshot", "progress", "queue-operation"}
)


class TranscriptError(ValueError):
    """Input that is not a transcript of the named format; `line` is 1-based."""

    def __init__(self, line: int, message: str):
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


@dataclass(frozen=True)
class Turn:
    number: int  # 1-based across the transcript: the `T<number>` locator
    speaker: str
    text: str
    time: str | None  # ISO 8601 (date, or date and time), own or its session's date
    session: int  # 1-based
    line: int  # the source line the turn starts on
    end_line: int

    def to_json(self) -> dict[str, object]:
        return {
            "turn": self.number,
            "locator": f"T{self.number}",
            "speaker": self.speaker,
            "time": self.time,
            "session": self.session,
            "lines": [self.line, self.end_line],
            "text": self.text,
        }

    @property
    def said(self) -> str:
        """`Speaker: text`, as the index and evidence read a turn."""
        return f"{self.speaker}: {self.text}"

    @property
    def day(self) -> str:
        """The day the turn was said, in words (`8 May 2023`; "" without a time)."""
        return day_in_words(self.time)


@dataclass(frozen=True)
class Transcript:
    format: str
    turns: tuple[Turn, ...]

    @property
    def sessions(self) -> int:
        return len({t.session for t in self.turns})

    def summary(self) -> dict[str, object]:
        times = [t.time for t in self.turns if t.time]
        return {
            "format": self.format,
            "turns": len(self.turns),
            "sessions": self.sessions,
            "speakers": sorted({t.speaker for t in self.turns}),
            "first_time": min(times) if times else None,
            "last_time": max(times) if times else None,
        }

    def span(self, start: int, end: int) -> tuple[Turn, ...]:
        return self.turns[start - 1 : end]


# -- times -------------------------------------------------------------------------------
def parse_time(raw: object) -> str | None:
    """An ISO date or date-time (minutes) from the usual spellings, else None.

    `2023-05-08`, `2023-05-08T10:32:00Z`, `1:56 pm on 8 May, 2023`, `May 8, 2023`, and
    Unix seconds or milliseconds."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, int | float):
        seconds = float(raw) / (1000 if raw > 1e11 else 1)
        try:
            return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M")
        except (OverflowError, OSError, ValueError):
            return None
    text = str(raw)[:200]
    m = _ISO.search(text)
    if m:
        date = m.group("date")
        if not _valid(date):
            return None
        if m.group("h") is not None:
            return f"{date}T{int(m.group('h')):02d}:{m.group('m')}"
        return date
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        d = pattern.search(text)
        if d and d.group("mon").lower().rstrip(".") in _MONTHS:
            date = f"{d.group('y')}-{_MONTHS[d.group('mon').lower()]:02d}-{int(d.group('d')):02d}"
            if not _valid(date):
                return None
            clock = _CLOCK.search(text)
            if clock:
                hour = int(clock.group("h"))
                ampm = (clock.group("ampm") or "").lower().replace(".", "")
                if ampm == "pm" and hour < 12:
                    hour += 12
                elif ampm == "am" and hour == 12:
                    hour = 0
                if hour < 24:
                    return f"{date}T{hour:02d}:{clock.group('m')}"
            return date
    return None


MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def day_in_words(time: str | None) -> str:
    """The day of an ISO date or date-time (`parse_time`'s) as a person writes it,
    `8 May 2023`; "" for None or anything else. A question names a day in words ("on 8
    May, 2023", "in June"), never as `2023-05-08`."""
    m = _ISO.match(time or "")
    if m is None or not _valid(m.group("date")):
        return ""
    year, month, day = (int(part) for part in m.group("date").split("-"))
    return f"{day} {MONTH_NAMES[month - 1]} {year}"


def _valid(date: str) -> bool:
    try:
        datetime.strptime(date, "%Y-%m-%d")
    except ValueError:
        return False
    return True


def parse_content(content: bytes) -> Transcript:
    """The turns of bytes meant as a transcript: in the format detected, else JSON
    Lines when the first line is an object, else plain text. Raises TranscriptError."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = content[: exc.start].count(b"\n") + 1
        raise TranscriptError(line, "not UTF-8 text") from None
    return _detected(text) or parse(text, _claimed_format(text) or "plain")


def _claimed_format(text: str) -> str | None:
    """JSON Lines when the first line is an object: then a bad later line is an error
    in JSON, not a reason to read the file as plain text."""
    first = next((ln for ln in text.split("\n") if ln.strip()), "")
    if first.lstrip().startswith("{"):
        return "claude-code" if '"message"' in first and '"type"' in first else "jsonl"
    return None


# -- detection ---------------------------------------------------------------------------
def detect(text: str) -> str | None:
    """The transcript format `text` is in, or None when it does not look like one.

    Conservative, since a false positive turns a document into turns: JSON Lines count
    only when every line is an object and the first ones are chat lines; plain text
    only with at least four turns, speakers who speak more than once, and nearly every
    line a turn, a header or a continuation of a turn."""
    found = _detected(text)
    return found.format if found is not None else None


def _detected(text: str) -> Transcript | None:
    """`text` read in the format `detect` finds, or None."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if not lines:
        return None
    if lines[0].lstrip().startswith("{"):
        fmt = _json_format(lines[:20])
        if fmt is None:
            return None
        try:
            return parse(text, fmt)
        except TranscriptError:
            return None
    try:
        found = parse(text, "plain")
    except TranscriptError:
        return None
    speakers = {t.speaker for t in found.turns}
    turns = len(found.turns)
    if turns < 4 or len(speakers) > max(2, turns // 2) or len(speakers) > 20:
        return None
    continued = sum(t.end_line - t.line for t in found.turns)
    return found if continued <= turns * 3 else None


def _json_format(lines: list[str]) -> str | None:
    for raw in lines:
        try:
            obj = safeload.json_value(raw, "line")
        except safeload.Unreadable:
            return None
        if not isinstance(obj, dict):
            return None
        kind = _text_or_none(obj.get("type"))
        if kind in _CLAUDE_TYPES and isinstance(obj.get("message"), dict):
            return "claude-code"
        if kind in _CLAUDE_OTHER:
            continue
        if _first(obj, _SPEAKER_KEYS) is not None and _first(obj, _TEXT_KEYS) is not None:
            return "jsonl"
        return None
    return None


# -- parsing -----------------------------------------------------------------------------
def parse(text: str, fmt: str | None = None) -> Transcript:
    """The turns of `text` in `fmt` (detected when None). Raises TranscriptError."""
    if fmt is None:
        fmt = detect(text)
        if fmt is None:
            raise TranscriptError(1, "not a transcript in any format vouch reads")
    if fmt == "plain":
        turns = _plain(text)
    elif fmt in ("jsonl", "claude-code"):
        turns = _json_lines(text, claude=fmt == "claude-code")
    else:
        raise TranscriptError(1, f"unknown transcript format {fmt!r}")
    if not turns:
        raise TranscriptError(1, "no turns found")
    return Transcript(fmt, tuple(turns))


class _Builder:
    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.session = 0
        self.session_date: str | None = None
        self.started = False  # the current session has a turn or a header

    def new_session(self, date: str | None) -> None:
        if self.started or self.session == 0:
            self.session += 1
        self.session_date = date
        self.started = False

    def add(self, speaker: str, text: str, time: str | None, line: int, end: int) -> None:
        if self.session == 0:
            self.session = 1
        self.started = True
        when = time or self.session_date
        if time and self.session_date and len(time) <= 5 and time[:1].isdigit():
            when = f"{self.session_date[:10]}T{time}"  # a clock time on the session's day
        self.turns.append(Turn(len(self.turns) + 1, speaker, text, when, self.session, line, end))


def _plain(text: str) -> list[Turn]:
    b = _Builder()
    lines = text.split("\n")
    current: dict[str, object] | None = None

    def flush() -> None:
        if current is not None:
            b.add(
                str(current["speaker"]),
                "\n".join(current["text"]).strip(),  # type: ignore[arg-type]
                current["time"],  # type: ignore[arg-type]
                int(current["line"]),  # type: ignore[call-overload]
                int(current["end"]),  # type: ignore[call-overload]
            )

    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if not stripped:
            continue
        header = _header(stripped) if not line[:1].isspace() else None
        if header is not None:
            flush()
            current = None
            kind, date = header
            if kind == "session":
                b.new_session(date)
            elif date is not None:
                b.session_date = date
            continue
        m = _TURN.match(line) if not line[:1].isspace() else None
        if m:
            flush()
            clock = m.group("time")
            time = None
            if clock:
                time = parse_time(clock)
                if time is None:
                    c = _CLOCK.fullmatch(clock.strip())
                    time = f"{int(c.group('h')):02d}:{c.group('m')}" if c else None
            current = {
                "speaker": m.group("speaker").strip(),
                "text": [m.group("text")],
                "time": time,
                "line": n,
                "end": n,
            }
            continue
        if current is None:
            raise TranscriptError(
                n,
                "expected a turn ('Speaker: text') or a session/date header, "
                f"found {stripped[:60]!r}",
            )
        current["text"].append(stripped)  # type: ignore[attr-defined]
        current["end"] = n
    flush()
    return b.turns


def _header(line: str) -> tuple[str, str | None] | None:
    """("session", date) for a line that starts a session, ("date", date) for one that
    dates it, None for anything else."""
    m = _SESSION.match(line)
    if m:
        return "session", parse_time(m.group("rest"))
    m = _DATE_LINE.match(line)
    if m:
        date = parse_time(m.group("rest"))
        return ("date", date) if date else None
    m = _RULE.match(line)
    if m and (line.startswith(("---", "===")) or line.startswith("#")):
        return "session", parse_time(m.group("rest"))
    return None


def _first(obj: dict[str, object], keys: tuple[str, ...]) -> object:
    for key in keys:
        if obj.get(key) not in (None, ""):
            return obj[key]
    return None


def _content_text(content: object, n: int, *, claude: bool) -> str | None:
    """The text of a message's content: a string, or the text blocks of a list (tool
    calls, tool results and thinking are skipped); None when it holds no text."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict) and not claude:
        content = [content]
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type", "text") == "text":
                value = block.get("text")
                if isinstance(value, str):
                    parts.append(value)
        return "\n\n".join(p for p in parts if p.strip()) or None
    raise TranscriptError(n, "a message's content must be text or a list of text blocks")


def _json_lines(text: str, *, claude: bool) -> list[Turn]:
    b = _Builder()
    last_session: object = None
    for n, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            obj = safeload.json_value(raw, "line")
        except safeload.Unreadable as exc:
            raise TranscriptError(n, f"not a JSON object ({_why(exc.detail)})") from None
        if not isinstance(obj, dict):
            raise TranscriptError(n, "not a JSON object")
        found = _claude_turn(obj, n) if claude else _chat_turn(obj, n)
        if found is None:
            continue
        speaker, body, when = found
        session = _first(obj, _SESSION_KEYS)
        if session is not None and session != last_session:
            if last_session is not None:
                b.new_session(None)
            last_session = session
        speaker = " ".join(speaker.split())[:MAX_SPEAKER]
        if not speaker:
            raise TranscriptError(n, "the speaker is empty")
        b.add(speaker, body.strip(), parse_time(when), n, n)
    return b.turns


def _why(detail: str) -> str:
    """`not JSON (Expecting value: line 1 column 5 (char 4))` -> `Expecting value`."""
    return detail.removeprefix("not JSON (").split(":")[0].rstrip(")")


def _text_or_none(value: object) -> str | None:
    """A field that should hold text: a list or an object there (hand-made or hostile
    lines) is no type vouch knows, not a reason to fail."""
    return value if isinstance(value, str) else None


def _chat_turn(obj: dict[str, object], n: int) -> tuple[str, str, object] | None:
    speaker = _first(obj, _SPEAKER_KEYS)
    if speaker is None:
        raise TranscriptError(n, "no speaker (role, speaker, author or name)")
    if not isinstance(speaker, str):
        raise TranscriptError(n, "the speaker must be text")
    content = _first(obj, _TEXT_KEYS)
    if content is None:
        raise TranscriptError(n, "no text (content or text)")
    body = _content_text(content, n, claude=False)
    if body is None or not body.strip():
        return None
    return speaker, body, _first(obj, _TIME_KEYS)


def _claude_turn(obj: dict[str, object], n: int) -> tuple[str, str, object] | None:
    kind = _text_or_none(obj.get("type"))
    if kind not in _CLAUDE_TYPES:
        return None  # summaries, snapshots, system lines: not part of the conversation
    if obj.get("isMeta") or obj.get("isSidechain"):
        return None
    message = obj.get("message")
    if not isinstance(message, dict):
        raise TranscriptError(n, f"a {kind} line without a message object")
    role = message.get("role") or kind
    if not isinstance(role, str):
        raise TranscriptError(n, "message.role must be text")
    body = _content_text(message.get("content"), n, claude=True)
    if body is None or not body.strip():
        return None  # only tool calls or tool results
    if kind == "user" and body.lstrip().startswith(("<command-", "<local-command-")):
        return None  # the CLI's own bookkeeping of slash commands
    return role, body, obj.get("timestamp")
