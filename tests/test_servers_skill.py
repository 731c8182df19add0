"""SKILL.md documents only what exists: every method, tool and command it names is real."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import click

from vouch.cli import cli
from vouch.methods import registry as ops

SKILL = Path(__file__).parent.parent / "SKILL.md"


def test_skill_file_has_frontmatter_and_the_required_sections() -> None:
    text = SKILL.read_text(encoding="utf-8")
    assert text.startswith("---\nname: vouch\ndescription:")
    for heading in (
        "## When to use it",
        "## Output formats",
        "## How to cite",
        "## Low-confidence and stale results",
        "## Etiquette",
    ):
        assert heading in text
    assert "Never approve your own proposal" in text


def test_every_method_and_tool_named_in_skill_md_is_registered() -> None:
    text = SKILL.read_text(encoding="utf-8")
    named = set(re.findall(r"\bkb\.([a-z_]+[a-z])", text))
    named |= set(re.findall(r"\bkb_([a-z_]+[a-z])(?![a-z_*])", text))
    missing = sorted(f"kb.{n}" for n in named if f"kb.{n}" not in ops.REGISTRY)
    tools = [m.tool_name for m in ops.REGISTRY.values()]
    for glob in re.findall(r"`(kb_[a-z_]*\*)`", text):  # a group of tools: `kb_read_*`
        if not fnmatch.filter(tools, glob):
            missing.append(glob)
    assert not missing, f"SKILL.md names methods that do not exist: {missing}"


def _command(*words: str) -> click.Command | None:
    """`vouch WORDS...` as the CLI resolves it (commands are built on demand)."""
    ctx = click.Context(cli)
    command = cli.get_command(ctx, words[0])
    if isinstance(command, click.Group) and len(words) > 1:
        return command.get_command(ctx, words[1])
    return command


def test_every_command_named_in_skill_md_exists() -> None:
    text = SKILL.read_text(encoding="utf-8")
    missing = []
    for words in re.findall(r"`vouch ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)", text):
        first, _, second = words.partition(" ")
        command = _command(first)
        if command is None:
            missing.append(first)
        elif isinstance(command, click.Group) and second and _command(first, second) is None:
            missing.append(words)
    assert not missing, f"SKILL.md names commands that do not exist: {sorted(set(missing))}"


def test_every_flag_shown_with_a_command_in_skill_md_exists() -> None:
    # review: the command names were checked, their flags were not
    text = SKILL.read_text(encoding="utf-8")
    missing = []
    for span in re.findall(r"`(vouch [^`]+)`", text):
        words = span.split()
        command = _command(words[1])
        if isinstance(command, click.Group) and len(words) > 2:
            command = _command(words[1], words[2])
        if command is None:
            continue  # the command test above reports it
        options = {opt for p in command.params for opt in getattr(p, "opts", ())}
        missing += [
            f"{span}: {flag}"
            for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", span)
            if flag not in options
        ]
    search = _command("search")
    assert search is not None
    options = {opt for p in search.params for opt in getattr(p, "opts", ())}
    paragraph = text[text.index("Search options") : text.index("## Adding knowledge")]
    missing += [
        f"search: {flag}"
        for flag in re.findall(r"`(--[a-z][a-z-]*)", paragraph)
        if flag not in options
    ]
    assert not missing, f"SKILL.md shows flags that do not exist: {missing}"
