"""`vouch warm start|status|stop|serve`: a process per knowledge base that answers cold
`vouch search` and `vouch context` commands (`vouch.servers.warm`, `vouch.forward`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from vouch import forward
from vouch.cli import cli
from vouch.cli.options import Output, kb_command
from vouch.errors import Conflict
from vouch.methods.context import CallContext
from vouch.store.kb import KB

IDLE_SECONDS = 1800


@cli.group("warm")
def warm_group() -> None:
    """Keep a process that has loaded the index and the model, so each `vouch search`
    and `vouch context` costs little more than starting Python. Answers are the ones
    the command would print itself; writes never go through it. VOUCH_NO_WARM=1 runs
    a command in its own process."""


_IDLE = click.option(
    "--idle-seconds",
    type=click.IntRange(min=0),
    default=IDLE_SECONDS,
    show_default=True,
    help="Exit after this long without a request (0: never).",
)


def _place(kb: KB) -> Path:
    """The knowledge base's warm-process folder (socket, lock, log)."""
    return forward.warm_dir(kb.state_dir, kb.dir)


def _answering(kb: KB, op: str) -> dict[str, Any] | None:
    found = forward.ask(_place(kb), op)
    if found == forward.SILENT:
        raise Conflict(
            f"a process holds {_place(kb) / forward.SOCKET_NAME} but did "
            f"not answer within {forward.ASK_SECONDS:g} s: busy with a long command, or "
            "stopped",
            hint="try again in a moment; `fuser -k` on the socket ends it for good",
        )
    return found


@warm_group.command("start")
@_IDLE
@kb_command(writes_actor=False)
def start_cmd(ctx: CallContext, out: Output, idle_seconds: int) -> None:
    """Start the knowledge base's warm process in the background (nothing to do when
        one runs already); it logs to warm.log in its folder inside the git directory
    (.git/vouch/warm-*/)."""
    from vouch.servers.warm import start

    kb = ctx.kb
    running = _answering(kb, "status")
    if running is None:
        running = start(kb, idle_seconds)
        running["started"] = True
    else:
        running["started"] = False

    def describe(r: dict[str, Any]) -> str:
        verb = "Started" if r["started"] else "Already running:"
        return f"{verb} warm process {r['pid']} for {r['kb']} (`vouch warm stop` stops it)"

    out.emit(running, describe)


@warm_group.command("status")
@kb_command(writes_actor=False)
def status_cmd(ctx: CallContext, out: Output) -> None:
    """Whether a warm process serves this knowledge base, and what it has done."""
    found = _answering(ctx.kb, "status")
    data = {"running": False, "kb": str(ctx.kb.dir)} if found is None else {"running": True}
    if found is not None:
        data.update({k: v for k, v in found.items() if k != "status"})

    def describe(r: dict[str, Any]) -> str:
        if not r["running"]:
            return f"No warm process for {r['kb']} (`vouch warm start` starts one)"
        return (
            f"Warm process {r['pid']} for {r['kb']}: up {r['uptime_seconds']:g} s, "
            f"{r['requests']} commands answered, file watch: {r['watch']}"
        )

    out.emit(data, describe)


@warm_group.command("stop")
@kb_command(writes_actor=False)
def stop_cmd(ctx: CallContext, out: Output) -> None:
    """Stop the knowledge base's warm process (nothing to do when none runs); one that
    cannot answer (stopped, hung) is resumed, then terminated, then killed."""
    from vouch.servers.warm_stop import stop

    found = stop(_place(ctx.kb))
    data: dict[str, Any] = {"stopped": found is not None, "kb": str(ctx.kb.dir)}
    if found is not None:
        data.update(pid=found.pid, how=found.how)
    out.emit(data, _stopped)


_HOW = {
    "asked": "",
    "resumed": " (it was stopped: resumed with SIGCONT, then it stopped as asked)",
    "terminated": " (it did not answer: ended with SIGTERM)",
    "killed": " (it did not answer, nor exit on SIGTERM: killed with SIGKILL)",
}


def _stopped(r: dict[str, Any]) -> str:
    if not r["stopped"]:
        return f"No warm process for {r['kb']}"
    return f"Stopped warm process {r['pid']}{_HOW.get(r['how'], '')}"


@warm_group.command("serve")
@_IDLE
@kb_command(writes_actor=False)
def serve_cmd(ctx: CallContext, out: Output, idle_seconds: int) -> None:
    """Be the warm process, in the foreground (for a process supervisor); logs to
    stderr. `vouch warm start` runs this in the background."""
    import logging

    from vouch.servers.warm import serve

    logging.basicConfig(level=logging.INFO, format="%(asctime)s vouch warm: %(message)s")
    serve(ctx.kb, idle_seconds)
