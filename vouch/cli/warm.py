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
    the command would print itself; writes never go through it. A cold search starts
    one by itself for the searches after it (not in CI, git hooks or pre-commit;
    VOUCH_NO_AUTO_WARM=1: never). VOUCH_NO_WARM=1 runs a command in its own process."""


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
    """Whether a warm process serves this knowledge base, what it has done, and whether
    it was started by a search; when none runs, whether a search would start one."""
    found = _answering(ctx.kb, "status")
    data = {"running": False, "kb": str(ctx.kb.dir)} if found is None else {"running": True}
    if found is not None:
        data.update({k: v for k, v in found.items() if k != "status"})
    else:
        data.update(_auto_start(ctx.kb))

    def describe(r: dict[str, Any]) -> str:
        if not r["running"]:
            return (
                f"No warm process for {r['kb']} (`vouch warm start` starts one); "
                f"{r['auto_start_why']}"
            )
        how = (
            f"started by a search, exits after {r['idle_seconds']:g} s without one"
            if r.get("auto_started")
            else "started by `vouch warm start`"
        )
        return (
            f"Warm process {r['pid']} for {r['kb']} ({how}): up {r['uptime_seconds']:g} s, "
            f"{r['requests']} commands answered, file watch: {r['watch']}"
        )

    out.emit(data, describe)


def _auto_start(kb: KB) -> dict[str, Any]:
    """Whether the next cold search would start a warm process (`vouch.autostart`):
    `auto_start` "on", "off" or "held_off", and why."""
    from vouch import autostart

    refused = autostart.refusal()
    if refused is not None:
        return {"auto_start": "off", "auto_start_why": f"a search starts none: {refused}"}
    held = autostart.pending(_place(kb))
    if held is None:
        return {"auto_start": "on", "auto_start_why": "the next search starts one"}
    until = _utc(held["until"])
    why = (
        "stopped by `vouch warm stop`"
        if held["why"] == "stop"
        else f"the last start did not end cleanly (see {_place(kb) / forward.LOG_NAME})"
    )
    return {
        "auto_start": "held_off",
        "auto_start_why": f"a search starts none until {until}: {why}",
        "auto_start_until": until,
    }


@warm_group.command("stop")
@kb_command(writes_actor=False)
def stop_cmd(ctx: CallContext, out: Output) -> None:
    """Stop the knowledge base's warm process (nothing to do when none runs); one that
    cannot answer (stopped, hung) is resumed, then terminated, then killed. A search
    starts none by itself for the next hour (VOUCH_NO_AUTO_WARM=1: never)."""
    from vouch import autostart
    from vouch.servers.warm_stop import stop

    found = stop(_place(ctx.kb))
    held = autostart.hold_off(_place(ctx.kb))  # nor does a search start one, for a while
    data: dict[str, Any] = {"stopped": found is not None, "kb": str(ctx.kb.dir)}
    if found is not None:
        data.update(pid=found.pid, how=found.how)
    if held is not None:
        data["auto_start_until"] = _utc(held)
    out.emit(data, _stopped)


def _utc(epoch: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_HOW = {
    "asked": "",
    "resumed": " (it was stopped: resumed with SIGCONT, then it stopped as asked)",
    "terminated": " (it did not answer: ended with SIGTERM)",
    "killed": " (it did not answer, nor exit on SIGTERM: killed with SIGKILL)",
}


def _stopped(r: dict[str, Any]) -> str:
    said = (
        f"Stopped warm process {r['pid']}{_HOW.get(r['how'], '')}"
        if r["stopped"]
        else f"No warm process for {r['kb']}"
    )
    if "auto_start_until" in r:
        said += f"; a search starts none by itself until {r['auto_start_until']}"
    return said


@warm_group.command("serve")
@_IDLE
@click.option("--auto-started", is_flag=True, hidden=True, help="Started by a search.")
@kb_command(writes_actor=False)
def serve_cmd(ctx: CallContext, out: Output, idle_seconds: int, auto_started: bool) -> None:
    """Be the warm process, in the foreground (for a process supervisor); logs to
    stderr. `vouch warm start` runs this in the background."""
    import logging

    from vouch.servers.warm import serve

    logging.basicConfig(level=logging.INFO, format="%(asctime)s vouch warm: %(message)s")
    serve(ctx.kb, idle_seconds, auto_started)
