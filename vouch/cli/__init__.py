"""The `vouch` command line: parse, call one registry method, format.

`main(argv)` is the single place where exceptions become exit statuses: 0 success,
1 user error, 2 system error. No traceback reaches a user unless VOUCH_DEBUG=1.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from importlib import import_module

import click

from vouch import __version__
from vouch.cli import progress
from vouch.cli.oneline import json_screen, screen
from vouch.cli.options import (
    chosen_format,
    forget_format,
    remember_group_options,
    shared_options,
)
from vouch.errors import SystemFailure, UsageError, VouchError, from_os_error


class _LazyGroup(click.Group):
    """Commands come from the registry (`vouch.cli.build`), built when asked for; the few
    that are not methods (`init`, `show`, `call`, `review`, `demo`, `serve`, `warm`,
    `eval`, `stats`) are hand-written in their modules, imported only for their own
    command, so a cold `vouch status` builds one command and imports no other command
    module.
    """

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in HAND_WRITTEN:
            import_module(f"vouch.cli.{HAND_WRITTEN[cmd_name]}")
            found = super().get_command(ctx, cmd_name)
        if found is None:
            from vouch.cli.build import command_for

            found = command_for(cmd_name)
            if found is not None:
                self.add_command(found, cmd_name)
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        from vouch.cli.build import verbs

        return sorted({*HAND_WRITTEN, *verbs()})

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        from vouch.cli import typos

        typos.check(self, ctx, args)  # "Did you mean ...?" for a mistyped command
        return super().resolve_command(ctx, args)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="vouch")
@shared_options
def cli(kb_path: str | None, actor: str | None, fmt: str | None, as_json: bool) -> None:
    """vouch — a git-native knowledge repository for teams and their agents.

    --kb, --as, --format and --json work before the command or after it.
    """
    remember_group_options(kb_path, actor, fmt, as_json)


def load_command(name: str) -> click.Command | None:
    """Build (or import) one command now: a warm process does so before its first
    request."""
    return cli.get_command(click.Context(cli), name)


# Commands that are not registry methods, and the module that defines each.
HAND_WRITTEN = {
    "init": "core",
    "show": "core",
    "call": "core",
    "demo": "demo",
    "serve": "serve",
    "eval": "search",
    "stats": "search",
    "hooks": "hooks",
    "review": "review",
    "install-agent": "agents",
    "warm": "warm",
    "kb": "kbs",
    "ui": "ui",
}


def _report(err: VouchError, fmt: str) -> int:
    if fmt == "json":
        click.echo(json_screen(json.dumps(err.to_json(), ensure_ascii=False)))
    click.echo(screen(f"error[{err.code}]: {err}"), err=True)
    return err.exit_code


# click >= 8.2 raises this for `vouch` or `vouch source` without a command; its message
# is the whole help (click 8.1 printed the help itself and exited 0)
_NO_COMMAND: type[click.exceptions.UsageError] = getattr(
    click.exceptions, "NoArgsIsHelpError", type("_NeverRaised", (click.exceptions.UsageError,), {})
)


def _no_command(exc: click.exceptions.UsageError, fmt: str) -> int:
    """A group run without a command: its help, once, on stderr — not the help wrapped in
    an error line that then points at the help — and exit 1 (nothing was done)."""
    where = exc.ctx.command_path if exc.ctx else "vouch"
    if fmt == "json":
        err = UsageError(f"{where} needs a command", hint=f"see `{where} --help`")
        click.echo(json_screen(json.dumps(err.to_json(), ensure_ascii=False)))
    click.echo(screen(exc.format_message()), err=True)
    return 1


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # A command multiplies at most a few vectors by the index's matrix; OpenBLAS would
    # start and spin a thread per core when numpy loads (~40 ms of CPU per cold search).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    forget_format()  # a usage error's format comes from this argv, not an earlier call
    try:
        try:
            result = cli.main(args=args, prog_name="vouch", standalone_mode=False)
        finally:
            progress.end()  # a bar left on the screen would run into what follows
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 1
    except _NO_COMMAND as exc:
        return _no_command(exc, chosen_format(args))
    except click.exceptions.UsageError as exc:
        hint = f"see `{exc.ctx.command_path} --help`" if exc.ctx else "see `vouch --help`"
        return _report(UsageError(exc.format_message(), hint=hint), chosen_format(args))
    except click.exceptions.ClickException as exc:
        return _report(UsageError(exc.format_message()), chosen_format(args))
    except VouchError as exc:
        if os.environ.get("VOUCH_DEBUG"):
            traceback.print_exc()
        return _report(exc, chosen_format(args))
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 1
    except Exception as exc:  # the one place a bug becomes an exit status, not a traceback
        if os.environ.get("VOUCH_DEBUG"):
            traceback.print_exc()
        wrapped = from_os_error(exc) or SystemFailure(
            f"internal error: {type(exc).__name__}: {exc}",
            hint="set VOUCH_DEBUG=1 for the traceback",
        )
        return _report(wrapped, chosen_format(args))
    return result if isinstance(result, int) else 0


def run() -> int:
    return main()
