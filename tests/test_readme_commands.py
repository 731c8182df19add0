"""Every command the README and docs/ show is run (issue 36 item 5): each `vouch ...` line
of a shell block and each `vouch ...` code span in the prose, its placeholders
(PROPOSAL_ID, CLAIM_ID, ...) filled from a real knowledge base in a temporary git
repository, runs in document order and does what it says: it never fails to parse (E100:
no such option, a missing argument), crashes or reports a system failure (exit 2), and
since each placeholder is made for the command that uses it (a fresh proposal to approve,
a fresh approved claim to archive), it is not refused either. A span that only names a
command (`vouch approve`, in a sentence) is checked with `--help`: the command exists.

The generated walkthrough (a `console` block) is run by tests/test_readme.py, and
SKILL.md's commands by tests/test_skill_contract.py. The grammar understood here is
small on purpose — commands, `&&`, `;`, pipes, `NAME=value` before a command, quoted
`$(git ...)` — so a line it cannot read fails rather than going unchecked."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from conftest import git
from gate_support import BOB, call, show

from vouch.cli import cli
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.kb import KB

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
SHELL = {"sh", "bash", "shell"}
SEPARATORS = {"&&", "||", ";", "|"}
# Synopses that are not command lines, each with the commands that stand for it and must
# appear runnable elsewhere. Keep it tiny.
SYNOPSES: dict[str, tuple[str, ...]] = {}
RUNBOOK = (ROOT / "examples" / "sources" / "deploy-runbook.md").read_text(encoding="utf-8")


def shell_lines(text: str) -> list[str]:
    """The logical lines of the document's shell blocks (a trailing `\\` continues)."""
    lines: list[str] = []
    for lang, body in FENCE.findall(text):
        if lang in SHELL:
            lines += body.replace("\\\n", " ").splitlines()
    return lines


def spans(text: str) -> list[str]:
    """The `vouch ...` code spans of the prose (outside fenced blocks), whitespace folded."""
    prose = FENCE.sub("", text)
    return [" ".join(s.split()) for s in re.findall(r"`(vouch\s[^`]+)`", prose)]


def commands(line: str) -> list[tuple[dict[str, str], list[str]]]:
    """Each `vouch` command of a shell line: (environment set before it, its words)."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    words = list(lex)
    found = []
    while words:
        cut = next((i for i, w in enumerate(words) if w in SEPARATORS), len(words))
        segment, words = words[:cut], words[cut + 1 :]
        env = {}
        while segment and re.fullmatch(r"[A-Z_]+=\S*", segment[0]):
            name, _, value = segment.pop(0).partition("=")
            env[name] = value
        if segment[:1] == ["vouch"]:
            found.append((env, segment[1:]))
    return found


def command_path(words: list[str]) -> bool:
    """Whether `words` only name a command (`source add`), with no argument or option."""
    command: click.Command | None = cli
    for word in words:
        if not isinstance(command, click.Group):
            return False
        command = command.get_command(click.Context(command), word)
    return command is not None and bool(words)


def every_command() -> list[tuple[str, dict[str, str], list[str]]]:
    """(where it was shown, environment, words after `vouch`), in document order."""
    out = []
    for doc in DOCUMENTS:
        text = doc.read_text(encoding="utf-8")
        name = doc.relative_to(ROOT).as_posix()
        for line in shell_lines(text):
            out += [(f"{name}: {line.strip()}", env, w) for env, w in commands(line)]
        for span in spans(text):
            if span in SYNOPSES:
                continue
            for env, words in commands(span):
                if command_path(words):
                    words = [*words, "--help"]  # a sentence names the command
                out.append((f"{name}: `{span}`", env, words))
    return out


class Placeholders:
    """Values for the placeholders the documents use, made when a command asks: a fresh
    proposal for each command that decides one, a fresh approved claim for each that
    changes one, so each command meets the state it describes."""

    def __init__(self, kb: KB) -> None:
        self.kb = kb
        self.root = kb.root
        self.made = 0
        self.verb = ""  # the command being filled
        self.source = call(kb, "kb.register_source_from_path", {"path": "docs/runbook.md"})["id"]
        (self.root / "page.md").write_text("# Billing\n\nThe billing service.\n")
        self.base = git(self.root, "rev-list", "--max-parents=0", "HEAD").strip()

    def _text(self, what: str) -> str:
        self.made += 1
        return f"{what} number {self.made} of the README's tests holds."

    def proposal(self) -> str:
        """An agent's proposal, shown to the reviewer; yours when you are to revise it."""
        params = {"text": self._text("Proposal"), "evidence": [f"{self.source}:L4"]}
        if self.verb == "revise":
            result = ops.invoke(CallContext(kb_path=str(self.root)), "kb.propose_claim", params)
        else:
            result = call(self.kb, "kb.propose_claim", params)
        pid = str(result["proposal_id"])
        show(self.kb, pid)  # a reviewer looked at it: approve may land what was shown
        return pid

    def approved(self, method: str, params: dict[str, object]) -> str:
        result = call(self.kb, method, params)
        show(self.kb, result["proposal_id"])
        call(self.kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)
        kind = method.removeprefix("kb.propose_")
        return str(result[f"{kind}_id"])

    def claim(self) -> str:
        cite = {"evidence": [f"{self.source}:L4"]}
        return self.approved("kb.propose_claim", {"text": self._text("Claim"), **cite})

    def entity(self) -> str:
        return self.approved("kb.propose_entity", {"name": f"System {self.made}", "type": "system"})

    def page(self) -> str:
        body = "# Deploys\n\nHow we deploy.\n"
        return self.approved("kb.propose_page", {"title": self._text("Page"), "body": body})

    def session(self) -> str:
        return str(call(self.kb, "kb.session_start", {"task": "readme"})["session_id"])

    def anchor(self) -> str:
        call(self.kb, "kb.audit_anchor", {}, actor="")
        return git(self.root, "tag", "--list", "vouch/audit/*").split()[-1]

    def makers(self) -> dict[str, Callable[[], str]]:
        return {
            "PROPOSAL_ID": self.proposal,
            "CLAIM_ID": self.claim,
            "OTHER_ID": self.claim,
            "OLD_ID": self.claim,
            "NEW_ID": self.claim,
            "ID": self.claim,
            "ENTITY_ID": self.entity,
            "PAGE_ID": self.page,
            "SESSION_ID": self.session,
            "SOURCE_ID": lambda: self.source,
            "BASE": lambda: self.base,
            "TAG": self.anchor,
            "FILE": lambda: "docs/runbook.md",
            "QUERY": lambda: "deploy",
            "TEXT": lambda: "triage the runbook",
            "COMMAND": lambda: "search",
        }

    def fill(self, words: list[str]) -> list[str]:
        """`words` with each placeholder replaced (one value per placeholder per
        command) and each quoted `$(git ...)` replaced by what git prints here."""
        makers, values = self.makers(), {}
        self.verb = words[0] if words else ""

        def value(match: re.Match[str]) -> str:
            if match[0] not in values:
                values[match[0]] = makers[match[0]]()
            return values[match[0]]

        pattern = re.compile(r"\b(?:" + "|".join(sorted(makers, key=len, reverse=True)) + r")\b")
        out = []
        for word in words:
            word = re.sub(r"\$\((git [^)]*)\)", self._git, word)
            assert "$" not in word, f"a shell expansion this test cannot run: {word}"
            word = pattern.sub(value, word)
            stray = re.fullmatch(r"[A-Z][A-Z0-9_]+", word)
            assert not stray or word in {"HEAD"}, f"unknown placeholder {word}"
            out.append(word)
        return out

    def _git(self, match: re.Match[str]) -> str:
        return git(self.root, *shlex.split(match[1])[1:]).strip()


@pytest.fixture
def documented(kb: KB) -> KB:
    """The repository the documents describe: the runbook at docs/runbook.md."""
    (kb.root / "docs").mkdir()
    (kb.root / "docs" / "runbook.md").write_text(RUNBOOK)
    git(kb.root, "add", "docs")
    git(kb.root, "commit", "-qm", "docs: the runbook")
    return kb


def test_the_documents_show_commands_this_test_reads() -> None:
    found = every_command()
    assert len(found) > 60
    shown = {" ".join(words) for _, _, words in found}
    for needle in ("install-agent claude-code", "approve PROPOSAL_ID", "lint --since BASE"):
        assert any(needle in line for line in shown), needle
    for synopsis, stand_ins in SYNOPSES.items():
        for command in stand_ins:
            assert command in shown, (synopsis, command)
    line = "vouch tags; X=1 vouch info ID | cat"
    assert commands(line) == [({}, ["tags"]), ({"X": "1"}, ["info", "ID"])]
    assert command_path(["source", "add"]) and not command_path(["source", "add", "a.md"])


def run_all(
    found: list[tuple[str, dict[str, str], list[str]]],
    kb: KB,
    run_cli: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> list[tuple[str, list[str], int, str]]:
    """Run each command; (where, what ran, exit status, last line) for each that did not
    do what it says: a usage error, a crash, a system failure or a refusal."""
    values = Placeholders(kb)
    # `vouch review` asks a person at a terminal: stdin is one here, at its end (it quits)
    from vouch.cli import review

    monkeypatch.setattr(review, "_terminal", lambda: True)
    failed = []
    try:
        for where, env, words in found:
            filled = values.fill(words)
            with monkeypatch.context() as patch:
                for name, value in env.items():
                    patch.setenv(name, value)
                res = run_cli(*filled, cwd=kb.root, input="")
            said = res.out + res.err
            if res.code or "Traceback" in said or "E100" in said:
                failed.append((where, filled, res.code, said.strip().splitlines()[-1:][0]))
    finally:
        run_cli("warm", "stop", cwd=kb.root)
    return failed


# the commands in document order, in PARTS runs of their own (each in its own repository,
# so that the test processes share the ~200 commands instead of one running them all)
PARTS = 8


@pytest.mark.parametrize("part", range(PARTS), ids=lambda n: f"part{n + 1}of{PARTS}")
def test_every_command_in_the_documents_runs(
    documented: KB, run_cli, monkeypatch: pytest.MonkeyPatch, part: int
) -> None:
    found = every_command()
    assert len(found) > 100
    size = -(-len(found) // PARTS)
    mine = found[part * size : (part + 1) * size]
    assert mine
    # each command meets the state it describes: anything but success means the document
    # (or the product) is wrong
    assert run_all(mine, documented, run_cli, monkeypatch) == []


def test_a_wrong_command_in_a_document_fails(
    documented: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check can fail: a mistyped option, a missing argument, a command that does not
    exist, each as a document would show it."""
    block = (
        "```sh\n"
        "vouch search 'roll back' --kinds claim    # a mistyped option\n"
        "vouch supersede CLAIM_ID --reason x       # a missing argument\n"
        "vouch status && vouch aprove PROPOSAL_ID  # a command that does not exist\n"
        "```\n"
    )
    found = [("block", env, w) for line in shell_lines(block) for env, w in commands(line)]
    assert [w[0] for _, _, w in found] == ["search", "supersede", "status", "aprove"]
    failed = run_all(found, documented, run_cli, monkeypatch)
    assert [(words[0], code) for _, words, code, _ in failed] == [
        ("search", 1),
        ("supersede", 1),
        ("aprove", 1),
    ]
    assert all("E100" in last for *_, last in failed), failed


def test_every_relative_link_in_the_documents_resolves() -> None:
    for doc in DOCUMENTS:
        text = FENCE.sub("", doc.read_text(encoding="utf-8"))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path, _, anchor = target.partition("#")
            resolved = (doc.parent / path).resolve()
            assert resolved.exists(), f"{doc.name}: {target}"
            if anchor and resolved.suffix == ".md":
                assert anchor in _anchors(resolved), f"{doc.name}: {target}"


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for a markdown file's headings."""
    heads = re.findall(r"^#+ (.+)$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}
