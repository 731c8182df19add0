"""`vouch ui`: the queue and a proposal's page at 10k approved claims with 100 pending
(issue 37, item 5), side by side with `vouch show` of the same proposal.

    python bench/bench_ui.py [--claims 10000] [--pending 100] [--rounds 30] [--record]

Works on a private clone of the generated knowledge base (bench/generate.py) under
bench/out/ui-<n>. An agent proposes `--pending` claims, each citing lines of a source;
then a `vouch ui` server runs in this process (as `vouch ui` runs it: the CLI's
CallContext, the index kept open between requests) and a plain HTTP client signs in
and times:

- GET /          the pending queue, whole response (target <= 100 ms);
- GET /p/<id>    a proposal's page: the screen with its cited lines, look-alikes
                 searched in the index, the thread, the forms (target <= 100 ms);
- the first proposal page after the server starts (index opened cold);
- `vouch show <id> --json`, a cold process per run (what the page replaces);
- kb.read_proposal in-process on a warm context (the screen alone, no HTML).
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import threading
import time
from pathlib import Path

from common import conditions, load_average, summary, table, time_cold, vouch_exe
from generate import private_clone

from vouch.kinds import source
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.servers.web import app
from vouch.store.kb import KB

TARGET_MS = 100.0


def propose(root: Path, count: int) -> list[str]:
    agent = CallContext(kb_path=str(root), agent="bench-agent")
    sid = KB.open(root).ids(source.KIND)[0]
    made = []
    for n in range(count):
        result = ops.invoke(
            agent,
            "kb.propose_claim",
            {"text": f"Pending benchmark claim {n}: deploys wait for review", "evidence": [sid]},
        )
        assert result["valid"], result
        made.append(str(result["proposal_id"]))
    return made


class Client:
    def __init__(self, server: app.Server):
        self.address = server.server_address
        self.host = server.review.guard.host
        self.cookie = ""
        res = self.get(f"/login?token={server.review.guard.token}")
        assert res[0] == 303, res
        self.cookie = self.last_cookie

    def get(self, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(str(self.address[0]), int(self.address[1]))
        conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", self.host)
        if self.cookie:
            conn.putheader("Cookie", self.cookie)
        conn.endheaders()
        res = conn.getresponse()
        body = res.read()
        self.last_cookie = (res.headers.get("Set-Cookie") or "").split(";")[0]
        conn.close()
        return res.status, body


CPU: dict[int, list[float]] = {}  # id of a wall-time list -> the CPU seconds of each run


def _cpu() -> float:
    """CPU seconds of this process and of the git processes it has waited for: steady
    when other work shares the cores, where wall time is not."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(fn, rounds: int) -> list[float]:  # type: ignore[no-untyped-def]
    out, cpu = [], []
    for _ in range(rounds):
        start, used = time.perf_counter(), _cpu()
        fn()
        out.append(time.perf_counter() - start)
        cpu.append(_cpu() - used)
    CPU[id(out)] = cpu
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--pending", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    load_before = load_average()
    root = private_clone(args.claims, "ui")
    pids = propose(root, args.pending)
    pid = pids[len(pids) // 2]
    exe = vouch_exe()
    show = time_cold([exe, "show", pid, "--json"], max(5, args.rounds // 3), cwd=root)
    reviewer = CallContext(kb_path=str(root), transport="cli")
    ops.invoke(reviewer, "kb.read_proposal", {"id": pid})  # the index opened, warm
    screen = timed(lambda: ops.invoke(reviewer, "kb.read_proposal", {"id": pid}), args.rounds)

    server = app.start(CallContext(kb_path=str(root), transport="cli"))
    thread = threading.Thread(target=app.serve, args=(server, 0), daemon=True)
    thread.start()
    try:
        client = Client(server)
        start = time.perf_counter()
        status, body = client.get(f"/p/{pid}")
        first = time.perf_counter() - start
        assert status == 200 and b"cited" in body, status
        status, body = client.get("/")
        assert status == 200 and len(re.findall(rb"<tr data-nav", body)) == args.pending
        queue = timed(lambda: client.get("/"), args.rounds)
        page = timed(lambda: client.get(f"/p/{pid}"), args.rounds)
    finally:
        server.shutdown()
        thread.join(10)

    rows = []
    for name, samples, target in (
        ("GET / (the queue)", queue, TARGET_MS),
        (f"GET /p/{pid} (a proposal's page)", page, TARGET_MS),
        ("first proposal page after start (index opened cold)", [first], None),
        (f"`vouch show {pid} --json` (cold process)", show, None),
        ("kb.read_proposal in-process, warm (the screen, no HTML)", screen, None),
    ):
        s = summary(samples)
        cpu = summary(CPU[id(samples)])["p50_ms"] if id(samples) in CPU else ""
        verdict = "" if target is None else ("ok" if s["p50_ms"] <= target else "OVER")
        rows.append([name, s["runs"], s["p50_ms"], s["p95_ms"], cpu, target or "", verdict])
    print(f"{args.claims} approved claims, {args.pending} pending — {conditions(load_before)}")
    header = ["what", "runs", "p50 ms", "p95 ms", "CPU p50 ms", "target ms", ""]
    print(table(header, rows))


if __name__ == "__main__":
    main()
