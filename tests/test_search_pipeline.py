"""The search pipeline reads as one (issue 35 item 4): `engine._search` runs the stages in
the order its docstring states, each stage takes the value the one before returned, and
a query's walk through `vouch.search` is a tree — each module is called from one module
only, but the candidates (`ranked`) the ranking stages share."""

from __future__ import annotations

import ast
import inspect
import re
import sys
import typing
from pathlib import Path
from typing import Any

from conftest import git
from search_support import build

from vouch.search import engine
from vouch.search.engine import SearchRequest, search
from vouch.store.kb import KB

STAGES = [
    "parse",
    "filter_scope",
    "channels",
    "fuse",
    "context",
    "floor",
    "prior",
    "threshold",
    "page",
    "budget",
    "respond",
]

SEEN = ["request", "tuning", "access", "cursor", "weighting", "ranking", "ranked", "prior"]
SEEN += ["hits", "citing", "budget", "tracing", "fusion"]


def test_the_stages_run_in_the_stated_order_each_taking_what_the_one_before_returned() -> None:
    body = ast.parse(inspect.getsource(engine._search)).body[0]
    called = [
        node.func.id
        for node in ast.walk(body)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    assert [name for name in called if name in STAGES] == STAGES
    stated = re.findall(r"^\d+\. `(\w+)`", engine.__doc__ or "", re.MULTILINE)
    assert stated == [*STAGES, "log_search"]
    given: Any = engine.Asked
    for name in STAGES:
        hints = typing.get_type_hints(getattr(engine, name), vars(engine))
        returned = hints.pop("return")
        assert list(hints.values()) == [given], name  # one input: what came before
        given = returned
    assert given == dict[str, Any]


def calls_between_modules(kb: KB, request: SearchRequest) -> dict[str, set[str]]:
    """Each `vouch.search` module a search entered, with the modules that called it."""
    stack: list[str | None] = []
    callers: dict[str, set[str]] = {}

    def innermost() -> str | None:
        return next((m for m in reversed(stack) if m is not None), None)

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            before = innermost()
            name = frame.f_globals.get("__name__", "")
            made = frame.f_code.co_name.startswith("<")  # runs for the function that made it
            stack.append(name if name.startswith("vouch.search") and not made else None)
            now = innermost()
            if before is not None and now is not None and now != before:
                callers.setdefault(now, set()).add(before)
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(profile)
    try:
        search(kb, request, warm={})
    finally:
        sys.setprofile(None)
    return callers


def test_a_query_walks_the_modules_as_a_tree(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    build(repo)
    kb = KB.open(repo)
    search(kb, SearchRequest(query="deploy", log=False))  # the index built
    entered: set[str] = set()
    for request in (
        SearchRequest(query="billing deploys rollback", log=False, trace=True),
        SearchRequest(query="when may we ship to production", log=False),
        SearchRequest(query="zzzqqqxxx", log=False),  # nothing matched: the floor asks
        SearchRequest(query="deploy", mode="fts", log=False, trace=True),
        SearchRequest(query="deploy", mode="vector", log=False, threshold=0.1),
    ):
        callers = calls_between_modules(kb, request)
        several = {m: c for m, c in callers.items() if len(c) > 1}
        assert set(several) <= {"vouch.search.ranked"}, (request.query, several)
        entered.update(callers)
    # the walks went through every stage's module
    assert {f"vouch.search.{m}" for m in SEEN} <= entered
