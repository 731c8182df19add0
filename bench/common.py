"""Shared helpers for benchmark scripts: cold subprocess timing, percentiles, the
machine description and appending to RESULTS.md.

"Cold" means a fresh process per run (interpreter start, imports, reading the knowledge
base), which is what a user or a git hook pays. The OS page cache stays warm: dropping it
would need root and disturb everyone else on the machine.
"""

from __future__ import annotations

import math
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"


def percentile(samples: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile: an observed value, never an interpolation."""
    ordered = sorted(samples)
    if not ordered:
        raise ValueError("no samples")
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def summary(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/min/max in milliseconds."""
    return {
        "runs": len(samples),
        "p50_ms": round(percentile(samples, 50) * 1000, 1),
        "p95_ms": round(percentile(samples, 95) * 1000, 1),
        "min_ms": round(min(samples) * 1000, 1),
        "max_ms": round(max(samples) * 1000, 1),
    }


def bench_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for timed commands: no VOUCH_* or GIT_* leaking in from outside,
    and bytecode caching on. An installed vouch has its .pyc files; with
    PYTHONDONTWRITEBYTECODE set (as on this machine) every run would compile each vouch
    module from source again (~+60 ms a command), so the warm-up run writes them.
    A cold search starts no warm process (VOUCH_NO_AUTO_WARM=1, `vouch.autostart`), or
    every run after the first would be answered by it; `{"VOUCH_NO_AUTO_WARM": ""}` in
    `extra` lets it."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("VOUCH_", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"))
        and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["VOUCH_NO_AUTO_WARM"] = "1"
    env.update(extra or {})
    return env


def time_cold(
    cmd: Sequence[str],
    runs: int = 10,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    warmup: int = 1,
) -> list[float]:
    """Wall-clock seconds of `runs` fresh subprocesses of `cmd` (after `warmup` untimed
    ones that fill the page cache). A failing command stops the benchmark."""
    return time_cold_cpu(cmd, runs, cwd=cwd, env=env, warmup=warmup)[0]


def run_vouch(
    cmd: Sequence[str], cwd: Path, *, check: bool = False, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """A vouch command as the benchmarks run one, untimed: the bench environment, output
    captured as text."""
    return subprocess.run(
        list(cmd),
        cwd=cwd,
        env=bench_env(),
        capture_output=True,
        text=True,
        check=check,
        timeout=timeout,
    )


def time_cold_cpu(
    cmd: Sequence[str],
    runs: int = 10,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    warmup: int = 1,
    before_each: Callable[[], object] | None = None,
) -> tuple[list[float], list[float]]:
    """(wall seconds, CPU seconds) per run. CPU time (user + system of the process and the
    git processes it waited for) barely moves when other work shares the cores, so it
    is the steadier number on a busy machine; wall time is what a user waits.
    `before_each` runs untimed before every run."""
    full_env = bench_env(env)
    walls: list[float] = []
    cpus: list[float] = []
    for n in range(warmup + runs):
        if before_each is not None:
            before_each()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            list(cmd),
            cwd=cwd,
            env=full_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise RuntimeError(
                f"{' '.join(cmd)} exited {proc.returncode}: "
                f"{proc.stderr.decode(errors='replace')[-1000:]}"
            )
        if n >= warmup:
            walls.append(elapsed)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return walls, cpus


def load_average() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def vouch_exe() -> str:
    """The installed `vouch` console script (what users and hooks run): the one beside
    this interpreter, as in a virtualenv or pipx. A `vouch` found on PATH first may be a
    version manager's shim (pyenv's is a bash script that runs `pyenv exec`: +50-70 ms
    a command, measured on this machine) that no installed vouch pays."""
    beside = Path(sys.executable).parent / "vouch"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("vouch")
    if not found:
        raise SystemExit("the `vouch` console script is not on PATH: pip install -e .")
    return found


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    git = subprocess.run(
        ["git", "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return (
        f"{os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}, "
        f"Python {sys.version.split()[0]}, {git}; shared with other engineers' work"
    )


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def conditions(load_before: str) -> str:
    """When and on what a section was measured, with the load around the run."""
    return (
        f"{today()} — {machine()}. Load average (1/5/15 min) before: {load_before}, "
        f"after: {load_average()}."
    )


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def append_results(heading: str, body: str) -> None:
    """Append a section to RESULTS.md (never rewriting what others recorded)."""
    text = f"\n## {heading}\n\n{body.strip()}\n"
    with open(RESULTS, "a", encoding="utf-8") as fh:
        fh.write(text)
