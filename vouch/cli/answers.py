"""What a person typed at `vouch review`'s prompt, read as a whole answer.

Only a whole word (`approve`, `reject`, `comment`, `skip`, `quit`, `help`) or its first
letter alone is an answer; anything else — `abort`, `apple`, `rej`, `yes`, an empty
line — is none, and the prompt asks again. A prefix is never enough: "abort" must not
approve because it starts with an a (issue 34, finding 11).
"""

from __future__ import annotations

WORDS = ("approve", "reject", "comment", "skip", "quit", "help")
_LETTERS = {word[0]: word for word in WORDS} | {"?": "help"}


def answer_of(typed: str) -> str | None:
    """The answer `typed` names (one of WORDS), or None when it names none."""
    text = typed.strip().lower()
    if text in WORDS:
        return text
    return _LETTERS.get(text)
