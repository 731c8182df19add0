"""The demo: a small knowledge base in a temporary git repo, built from the bundled examples.

Yields narration lines (the core never prints); `vouch demo` echoes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from vouch import git
from vouch.errors import VouchError
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.initkb import init_kb

AUTHOR = "demo-agent"


def example_files() -> list[Path]:
    root = resources.files("vouch").joinpath("examples", "sources")
    return sorted(Path(str(p)) for p in root.iterdir() if p.is_file())


def run_demo(repo: Path) -> Iterator[str]:
    repo.mkdir(parents=True)
    git.init_repo(repo)
    plumbing = git.Repo(repo)
    plumbing.set_config("user.name", "Demo Reviewer")
    plumbing.set_config("user.email", "reviewer@example.invalid")
    result = init_kb(repo, AUTHOR)
    yield f"1. vouch init → {result.root} (committed: {', '.join(result.files)})"

    agent = CallContext(kb_path=str(repo), actor_override=AUTHOR)
    yield "2. vouch source add — the agent registers the example documents:"
    for path in example_files():
        reg = ops.invoke(
            agent,
            "kb.register_source",
            {
                "content": path.read_text(encoding="utf-8"),
                "locator": f"examples/{path.name}",
                "title": path.name,
            },
        )
        yield f"   {path.name:<28} → {reg['id'][:16]}…"

    status = ops.invoke(agent, "kb.status")
    counts = ", ".join(f"{v} {k}" for k, v in status["counts"].items() if v)
    yield f"3. vouch status → {counts}; {status['pending']} pending"
    log = plumbing.log_records("HEAD", ("%h", "%s"))
    yield f"4. git log → {len(log)} commits, newest: {' '.join(log[0])}"
    yield from _review_gate(repo, agent)

    # -- search (issue 5): the demo ends by finding what the knowledge base knows ----------
    question = "how do I undo a bad release"
    hits = ops.invoke(agent, "kb.search", {"query": question, "limit": 3})
    yield f'10. vouch search "{question}" → {len(hits)} hits, best first:'
    for hit in hits:
        where = hit["source"]["title"] + (
            f" §{hit['source']['section']}" if hit["source"]["section"] else ""
        )
        yield f"   [{hit['score']:.3f}] {hit['kind']} {where}"


# -- review gate (issue 3): propose → pending → approve → audit ------------------------------
REVIEWER = "Demo Reviewer"


def _review_gate(repo: Path, agent: CallContext) -> Iterator[str]:
    from vouch.core.ids import sha256_hex

    runbook = next(p for p in example_files() if p.name == "deploy-runbook.md")
    source_id = sha256_hex(runbook.read_text(encoding="utf-8").encode())
    proposed = ops.invoke(
        agent,
        "kb.propose_claim",
        {
            "text": "Rollbacks of the billing service do not need a review.",
            "evidence": [f"{source_id}:L8"],
            "type": "fact",
            "tags": ["deploy"],
            "rationale": "stated in the runbook's rollback section",
        },
    )
    pid = proposed["proposal_id"]
    yield (f"5. vouch propose-claim (as {AUTHOR}) → proposal {pid}, a branch: vouch/proposal/{pid}")
    pending = ops.invoke(agent, "kb.list_pending")
    yield f"6. vouch pending → {len(pending)} open: {pending[0]['title']}"
    refused = ""
    try:
        ops.invoke(agent, "kb.approve", {"proposal_id": pid})
    except VouchError as exc:
        refused = exc.code
    yield f"7. vouch approve {pid} (as {AUTHOR}) → refused [{refused}]: no self-approval"
    reviewer = CallContext(kb_path=str(repo), actor_override=REVIEWER)
    approved = ops.invoke(
        reviewer, "kb.approve", {"proposal_id": pid, "reason": "matches the runbook"}
    )
    merge = " ".join(git.Repo(repo).log_records("HEAD", ("%h", "%s"), max_count=1)[0])
    yield (
        f"8. vouch approve (as {REVIEWER}) → {approved['object_kind']} "
        f"{approved['object_id']} merged: {merge}"
    )
    report = ops.invoke(reviewer, "kb.audit_verify")
    events = [e["event"] for e in ops.invoke(reviewer, "kb.audit", {"tail": 3})]
    yield (
        f"9. vouch audit --verify → {'OK' if report['ok'] else 'BROKEN'}, "
        f"{report['events']} events; newest: {', '.join(events)}"
    )
