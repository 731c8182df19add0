"""`vouch ui`: the review page in a browser, for the person at this terminal
(`vouch.servers.web`)."""

from __future__ import annotations

import logging
import os

import click

from vouch.cli import cli
from vouch.cli.options import Output, kb_command
from vouch.methods.context import CallContext
from vouch.servers.web.app import IDLE_SECONDS


@cli.command("ui")
@click.option(
    "--idle-seconds",
    type=click.IntRange(min=0),
    default=IDLE_SECONDS,
    show_default=True,
    help="Stop after this long without a request (0: never).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in your browser.")
@kb_command()
def ui_cmd(ctx: CallContext, out: Output, idle_seconds: int, open_browser: bool) -> None:
    """Review in a browser: the pending queue, each proposal beside its cited lines,
    approve / reject / comment / approve together, search, why and log.

    The page listens on 127.0.0.1 on a random port and decides as you do at the CLI (your
    git identity; each decision pinned to the commit the page showed). The URL it prints
    holds a token that works once: it signs your browser in. Ctrl-C stops it.
    """
    from vouch.servers.web import app

    debug = bool(os.environ.get("VOUCH_DEBUG"))
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING, format="vouch ui: %(message)s"
    )
    server = app.start(ctx)
    url = server.review.guard.login_url()
    idle = f"after {idle_seconds} s without a request" if idle_seconds else "never when idle"
    click.echo(f"Review page for {server.review.reviewer}: {url}")
    click.echo(f"(the link works once; Ctrl-C stops the page; it stops {idle})")
    if open_browser:  # a browser command that stays in the foreground must not hold the page
        import threading
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    try:
        app.serve(server, idle_seconds, on_idle=lambda: click.echo("stopped: idle", err=True))
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
