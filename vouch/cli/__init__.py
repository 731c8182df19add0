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
from vouch.cli.options import (
    chosen_format,
    forget_format,
    remember_group_options,
    shared_options,
)
from vouch.errors import SystemFailure, UsageError, VouchError, from_os_error


class _LazyGroup(click.Group):
    """Loads the command modules beyond `cli.core` only when a command is not found there.

    Commands register themselves when their module is imported. Most cold invocations
    (hooks, scripts, `vouch status`) run an everyday command from `cli.core`; importing
    every command module first (gate, search, servers, ...) would add ~15 ms to each.
    """

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in _COMMAND_MODULES:
            import_module(f"vouch.cli.{_COMMAND_MODULES[cmd_name]}")
            found = super().get_command(ctx, cmd_name)
        if found is None:
            _load_commands()
            found = super().get_command(ctx, cmd_name)
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        _load_commands()
        return super().list_commands(ctx)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="vouch")
@shared_options
def cli(kb_path: str | None, actor: str | None, fmt: str | None, as_json: bool) -> None:
    """vouch — a git-native knowledge repository for teams and their agents.

    --kb, --as, --format and --json work before the command or after it.
    """
    remember_group_options(kb_path, actor, fmt, as_json)


# The module of each command beyond `cli.core`, so a cold `vouch search` imports only
# `cli.search` (loading every command module costs ~8 ms). A command missing here, or
# moved, still works: then every module is loaded, as for --help.
_COMMAND_MODULES = {
    "search": "search", "eval": "search", "stats": "search", "tags": "search",
    "info": "search", "index": "index", "source": "sources", "demo": "demo",
    "serve": "serve", "propose-claim": "gate", "propose-entity": "gate",
    "propose-relation": "gate", "propose-page": "gate", "pending": "gate",
    "approve": "gate", "reject": "gate", "audit": "gate", "evidence": "gate",
}


def _load_commands() -> None:
    # Importing a command module registers its commands on `cli`.
    from vouch.cli import core, demo, gate, index, search, serve, sources  # noqa: F401


def _report(err: VouchError, fmt: str) -> int:
    if fmt == "json":
        click.echo(json.dumps(err.to_json(), ensure_ascii=False))
    click.echo(f"error[{err.code}]: {err}", err=True)
    return err.exit_code


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # A command multiplies at most a few vectors by the index's matrix; OpenBLAS would
    # start and spin a thread per core when numpy loads (~40 ms of CPU per cold search).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from vouch.cli import core  # noqa: F401 - everyday commands; the rest load on demand
    forget_format()  # a usage error's format comes from this argv, not an earlier call
    try:
        result = cli.main(args=args, prog_name="vouch", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 1
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
            hint="set VOUCH_DEBUG=1 for the traceback")
        return _report(wrapped, chosen_format(args))
    return result if isinstance(result, int) else 0


def run() -> int:
    return main()
