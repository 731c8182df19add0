"""Options every command shares, defined once: --kb, --as, --format/--json."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any

import click

from vouch.cli import progress
from vouch.cli.oneline import json_screen, screen
from vouch.errors import UsageError
from vouch.methods.context import CallContext

# markdown: the human rendering, for commands whose human output is markdown meant for
# a prompt (`vouch context`); any other command prints its human text
FORMATS = ("human", "json", "markdown")
_chosen: dict[str, str] = {}
_before_command: dict[str, Any] = {}  # --kb/--as/--format/--json given before the command
_shared_warm: list[dict[Any, Any]] = []  # the warm process's caches, kept across commands

AS_HELP = (
    "A label recorded beside who acts (your git identity, or the VOUCH_AGENT agent); "
    "never instead of it."
)


def share_warm(warm: dict[Any, Any]) -> None:
    """Every command this process runs from now on keeps its index, model and object
    caches in `warm` (`vouch.servers.warm`: one process, many command lines)."""
    _shared_warm[:] = [warm]


def forget_format() -> None:
    """Start an invocation afresh: `main` can run many times in one process (tests, demo)."""
    _chosen.clear()
    _before_command.clear()


def shared_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The shared options, once: a command accepts them before or after its name."""
    fn = click.option(
        "--kb",
        "kb_path",
        metavar="PATH",
        help="Knowledge base (a repo or its .vouch/); else VOUCH_KB, else walk up from here.",
    )(fn)
    fn = click.option(
        "--as",
        "actor",
        metavar="NAME",
        help=AS_HELP,
    )(fn)
    fn = click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default=None,
        help="Output format (default: human on a terminal, json in a pipe).",
    )(fn)
    return click.option("--json", "as_json", is_flag=True, help="Same as --format json.")(fn)


def remember_group_options(
    kb_path: str | None, actor: str | None, fmt: str | None, as_json: bool
) -> None:
    _before_command.update(kb_path=kb_path, actor=actor, fmt="json" if as_json else fmt)


def for_terminal_or_pipe(for_people: str = "human") -> str:
    """The one rule for a command's output when neither --json nor --format is given:
    `for_people` (human text, or markdown for `context`) when stdout is a terminal, JSON
    when it is not — what a pipe, a script or an agent reads (as git, rg and gh do). A
    command whose only output is JSON (`call`) says so with `for_people="json"`.

    In the warm process stdout is the client's captured output, which answers
    `isatty()` as the client's own stdout did (`vouch.servers.warm`)."""
    if for_people == "json":
        return "json"
    out = sys.stdout
    try:
        on_terminal = out is not None and out.isatty()
    except (ValueError, OSError):  # closed or detached: nobody reads it as a person
        on_terminal = False
    return for_people if on_terminal else "json"


def stdout_is_a_protocol() -> None:
    """`vouch serve`: stdout carries the agent protocol's messages, so an error before it
    starts is said on stderr only, never as a stray JSON line on stdout."""
    _chosen["format"] = "human"


def chosen_format(argv: list[str]) -> str:
    """The output format of this invocation, even when option parsing failed."""
    if "format" in _chosen:
        return _chosen["format"]
    for i, arg in enumerate(argv):
        if arg == "--json":
            return "json"
        if arg.startswith("--format=") and arg[len("--format=") :] in FORMATS:
            return arg[len("--format=") :]
        if arg == "--format" and i + 1 < len(argv) and argv[i + 1] in FORMATS:
            return argv[i + 1]
    return for_terminal_or_pipe()


class Output:
    def __init__(self, fmt: str):
        self.format = fmt

    @property
    def json(self) -> bool:
        return self.format == "json"

    def emit(self, data: Any, human: Callable[[Any], str] | None = None) -> None:
        progress.end()
        if self.json or human is None:
            click.echo(json_screen(json.dumps(data, indent=2, ensure_ascii=False, default=str)))
        else:
            text = human(data)
            if text:
                click.echo(screen(text))

    def info(self, message: str) -> None:
        """Narration for people: stderr, so stdout stays scriptable."""
        progress.end()
        click.echo(screen(message), err=True)


def _format_help(for_people: str) -> str:
    if for_people == "json":
        return "Output format (default json)."
    return f"Output format (default: {for_people} on a terminal, json in a pipe)."


def shared_params(
    default_format: str = "human", writes_actor: bool = True, formats: tuple[str, ...] = ()
) -> list[click.Parameter]:
    """--kb, --as, --format and --json, as click parameters for one command (`formats`:
    the command's own output formats beyond the shared ones, `vouch graph --format dot`)."""
    return [
        click.Option(
            ["--kb", "kb_path"],
            metavar="PATH",
            help="Knowledge base (a repo or its .vouch/); else VOUCH_KB, else walk up from here.",
        ),
        click.Option(
            ["--as", "actor"],
            metavar="NAME",
            hidden=not writes_actor,
            help=AS_HELP,
        ),
        click.Option(
            ["--format", "fmt"],
            type=click.Choice([*FORMATS, *formats]),
            default=None,
            help=_format_help(default_format),
        ),
        click.Option(["--json", "as_json"], is_flag=True, help="Same as --format json."),
    ]


def open_call(values: dict[str, Any], default_format: str) -> tuple[CallContext, Output]:
    """Take the shared options out of a command's `values`: the call's context and output."""
    early = _before_command
    kb_path, actor = values.pop("kb_path", None), values.pop("actor", None)
    fmt, as_json = values.pop("fmt", None), values.pop("as_json", False)
    given = "json" if as_json else (fmt or early.get("fmt"))
    chosen = given or for_terminal_or_pipe(default_format)
    _chosen["format"] = chosen
    ctx = CallContext(
        kb_path=kb_path or early.get("kb_path"),
        actor_override=actor or early.get("actor"),
        transport="cli",
        progress=progress.reporter(chosen),
    )
    if _shared_warm:
        ctx.warm = _shared_warm[0]
    return ctx, Output(chosen)


def kb_command(default_format: str = "human", writes_actor: bool = True) -> Callable[..., Any]:
    """For hand-written commands: add the shared options; pass the command (ctx, out, ...)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(**values: Any) -> Any:
            ctx, out = open_call(values, default_format)
            return fn(ctx, out, **values)

        params = getattr(fn, "__click_params__", [])
        shared = list(reversed(shared_params(default_format, writes_actor)))
        setattr(wrapper, "__click_params__", [*shared, *params])  # noqa: B010 - click's hook
        return wrapper

    return decorate


def key_values(pairs: tuple[str, ...] | list[str], option: str = "--filter") -> dict[str, Any]:
    """`KEY=VALUE` pairs as a mapping; a key given twice collects a list."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{option} {pair!r} must look like key=value")
        if key in out:
            existing = out[key] if isinstance(out[key], list) else [out[key]]
            out[key] = [*existing, value]
        else:
            out[key] = value
    return out


def split_csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def stdin_bytes() -> bytes:
    return sys.stdin.buffer.read()
