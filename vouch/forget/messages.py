"""What a purge does to commit and tag messages.

A proposal commit's subject carries the first words of what it proposes (`vouch:
propose claim: <text>`) and its body the proposer's rationale: for a forgotten object
both go, the trailers (ids, names, the structure every check reads) stay. Every literal
`--token` is replaced wherever a message holds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from vouch.gate.records import parse_message

NOTICE = "[forgotten]"


def scrubber(ids: Iterable[str], tokens: Iterable[str]) -> Callable[[bytes], bytes]:
    forgotten = set(ids)
    needles = [t.encode() for t in tokens if t]

    def scrub(message: bytes) -> bytes:
        out = _proposal(message, forgotten)
        for needle in needles:
            out = out.replace(needle, NOTICE.encode())
        return out

    return scrub


def _proposal(message: bytes, forgotten: set[str]) -> bytes:
    """A proposal (or revision) commit of a forgotten object, without its words."""
    try:
        text = message.decode("utf-8")
    except UnicodeDecodeError:
        return message
    _subject, _, trailers = parse_message(text)
    objects = {v.strip() for v in trailers.get("Vouch-Object", [])}
    if not objects & forgotten or trailers.get("Vouch-Decision"):
        return message
    kind = (trailers.get("Vouch-Kind") or ["object"])[0].strip()
    block = text.rstrip("\n").rsplit("\n\n", 1)[-1]
    return f"vouch: propose {kind}: {NOTICE}\n\n{block}\n".encode()


def holds_words(message: str, ids: Iterable[str]) -> bool:
    """Is `message` a proposal commit of one of `ids` (its words are scrubbed)?"""
    return _proposal(message.encode(), set(ids)) != message.encode()
