"""Who proposed and who decides: git identities, compared as a person reads them.

An identity is a git identity — a name and an e-mail, as `git var GIT_COMMITTER_IDENT`
gives them (GIT_COMMITTER_NAME/EMAIL, user.name/email). A declared agent is its own
principal: its name, a reserved address (`<slug>@agent.vouch.invalid`) and the person
who runs it (its operator). `--as` is a label kept beside the identity, never instead.

Two identities are the same principal when their e-mails match, or their names match,
each after NFKC normalisation, removal of format characters (zero-width spaces, bidi
marks), case folding and whitespace collapsing; labels are compared the same way as an
extra check. A name holding a control or format character, or a word mixing look-alike
alphabets (a Cyrillic `о` in `Bob`), is refused outright: it can only be there to look
like someone else (DESIGN §4.1).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vouch.errors import UsageError

if TYPE_CHECKING:
    from vouch.store.kb import KB

AGENT_DOMAIN = "agent.vouch.invalid"  # `.invalid` is reserved: no mailbox can own it
_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Identity:
    """One principal: a git name and e-mail, whether it is a declared agent, the
    operator running that agent (`Name <email>`), the `--as` label, the signing key."""

    name: str
    email: str = ""
    agent: bool = False
    operator: str | None = None
    label: str | None = None

    @property
    def who(self) -> str:
        """`Name <email>` as git writes it (the name alone without an e-mail)."""
        return f"{self.name} <{self.email}>" if self.email else self.name

    def describe(self) -> str:
        """`Name <email>`, plus `as <label>` / `agent <name>, run by <operator>`."""
        text = f"agent {self.who}" if self.agent else self.who
        if self.agent and self.operator:
            text += f", run by {self.operator}"
        if self.label and fold(self.label) != fold(self.name):
            text += f", as {self.label}"
        return text


def fold(text: str | None) -> str:
    """`text` as a person reads it: NFKC, no format characters, case-folded, single
    spaces, no surrounding space."""
    if not text:
        return ""
    norm = unicodedata.normalize("NFKC", text)
    norm = "".join(c for c in norm if unicodedata.category(c) != "Cf")
    return " ".join(norm.casefold().split())


def check_name(text: str, what: str = "name") -> str:
    """`text` stripped; refused (UsageError) when it holds a control or format character
    or nothing at all."""
    bad = [
        c
        for c in text
        if unicodedata.category(c) in ("Cc", "Cf") or c in "<>" or c in _BLANK_LETTERS
    ]
    if bad:
        codes = ", ".join(sorted({f"U+{ord(c):04X}" for c in bad}))
        raise UsageError(
            f"{what} {text!r} holds invisible, control or bracket characters ({codes})",
            hint="use a plain name: characters that print, nothing invisible between them "
            "and no < or >",
        )
    clean = " ".join(text.split())
    if not clean:
        raise UsageError(f"{what} is empty", hint="give a name")
    for word in clean.split():
        scripts = _scripts(word)
        if len(scripts) > 1:
            raise UsageError(
                f"{what} {text!r} mixes the {' and '.join(sorted(scripts))} alphabets in "
                f"{word!r}: letters that look alike across alphabets only make a name "
                "look like someone else's",
                hint="write each word of the name in one alphabet",
            )
    return clean


# letters that print nothing (Hangul fillers, the braille blank): "Rita" plus one of them
# reads as "Rita" (the fourth outsider)
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_ALPHABETS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE")  # the look-alike ones


def _scripts(word: str) -> set[str]:
    """The look-alike alphabets the letters of `word` come from (Unicode names)."""
    found = set()
    for ch in word:
        if ch.isalpha():
            first = unicodedata.name(ch, "").split(" ", 1)[0]
            if first in _ALPHABETS:
                found.add(first.lower())
    return found


def is_agent_email(email: str) -> bool:
    """Whether `email` is in the domain reserved for declared agents (or below it),
    compared folded: only vouch makes such an address, for an agent a server declares."""
    domain = fold(email).rstrip(".").rpartition("@")[2]
    return domain == AGENT_DOMAIN or domain.endswith("." + AGENT_DOMAIN)


def check_person_email(email: str, what: str = "git user e-mail") -> str:
    """A person's e-mail, refused (UsageError) when it is in the agents' reserved domain:
    a person using `bot2@agent.vouch.invalid` would be read as the agent bot2 — their
    rejection of bot2's proposal recorded as bot2's own withdrawal (the fifth outsider)."""
    if is_agent_email(email):
        raise UsageError(
            f"{what} {email!r} is in {AGENT_DOMAIN}, the domain vouch reserves for the "
            "agents a server declares: a person cannot act under an agent's address",
            hint="set your own address (git config user.email you@example.com, or "
            "GIT_COMMITTER_EMAIL); an agent acts through `VOUCH_AGENT=<name> vouch serve`",
        )
    return email


def agent_email(name: str) -> str:
    """The reserved address of a declared agent: `<slug>@agent.vouch.invalid`."""
    slug = _SLUG.sub("-", fold(name)).strip("-") or "agent"
    return f"{slug[:64]}@{AGENT_DOMAIN}"


def parse_who(who: str) -> tuple[str, str]:
    """(name, email) from `Name <email>` (the e-mail empty when there is none)."""
    who = who.strip()
    if who.endswith(">") and "<" in who:
        name, _, email = who[:-1].rpartition("<")
        return name.strip(), email.strip()
    return who, ""


def forms(who: str) -> set[str]:
    """A name, an e-mail or `Name <email>`, folded, as every form it may be listed,
    signed or recorded as (`Name <email>` also matches its name or its e-mail alone)."""
    name, email = parse_who(who)
    return {fold(who), fold(name), fold(email)} - {""}


def same(a: Identity, b: Identity) -> bool:
    """Whether `a` and `b` are one principal: same e-mail, or same name, or a label
    naming the other (all folded)."""
    if a.email and b.email and fold(a.email) == fold(b.email):
        return True
    names_a = {fold(x) for x in (a.name, a.label) if x} - {""}
    names_b = {fold(x) for x in (b.name, b.label) if x} - {""}
    return bool(names_a & names_b)


def matches(identity: Identity, listed: list[str]) -> bool:
    """Whether a `review.approvers` entry names this identity — its name, its e-mail or
    `Name <email>` — never its label."""
    mine = {fold(identity.name), fold(identity.email)} - {""}
    for entry in listed:
        name, email = parse_who(str(entry))
        if {fold(name), fold(email)} & mine:
            return True
    return False


def principal(kb: KB, actor: str | Identity) -> Identity:
    """An identity as the gate takes it. A library caller that passes a bare name
    passes a declared agent (run by this clone's git user), as VOUCH_AGENT would."""
    if isinstance(actor, Identity):
        return actor
    name = check_name(actor, "agent name")
    who, email = kb.repo.identity()
    check_person_email(email)  # the operator is a person
    return Identity(name, agent_email(name), agent=True, operator=f"{who} <{email}>")
