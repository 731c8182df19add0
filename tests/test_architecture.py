"""The walls of STYLE.md, checked on the source: imports point one way, one owner per
dependency, no cycle. Every import counts, the lazy ones inside functions too: a lazy
import is still a dependency, only a cheaper one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import vouch

PACKAGE = Path(vouch.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str) -> set[str]:
    """Every module `name` imports (vouch modules resolved; others by top-level name)."""
    path = MODULES[name]
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")
                package = parts if is_package else parts[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in MODULES else base)
    resolved = set()
    for target in out:
        while target not in MODULES and "." in target and target.startswith("vouch"):
            target = target.rsplit(".", 1)[0]
        resolved.add(target)
    resolved.discard(name)
    return resolved


GRAPH = {name: _imports(name) for name in MODULES}


def _inside(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_import_graph_has_no_cycle() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in GRAPH[node]:
            if dep not in MODULES:
                continue
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(MODULES):
        if name not in index:
            visit(name)
    assert cycles == []


# (importer prefixes, imported prefixes it must never reach)
WALLS = [
    # transports sit on top: nothing below imports them
    (
        [
            m
            for m in MODULES
            # vouch.launch is the entry point: it starts the CLI
            if not _inside(m, "vouch.cli", "vouch.servers", "vouch.__main__", "vouch.launch")
        ],
        ("vouch.cli", "vouch.servers"),
    ),
    # the registry never imports a transport; the core never imports the registry
    (
        [
            m
            for m in MODULES
            if _inside(
                m,
                "vouch.gate",
                "vouch.index",
                "vouch.search",
                "vouch.kinds",
                "vouch.git",
                "vouch.store",
            )
            and not m.endswith(".handlers")
        ],
        ("vouch.methods.registry", "vouch.methods.registry"),
    ),
    # object kinds know nothing of git, the index or the gate
    (
        [m for m in MODULES if _inside(m, "vouch.kinds")],
        ("vouch.git", "vouch.index", "vouch.gate", "vouch.search", "vouch.store"),
    ),
    # git is the bottom: it knows only the errors
    (
        [m for m in MODULES if _inside(m, "vouch.git")],
        tuple(
            sorted(
                {
                    m.split(".")[1] and f"vouch.{m.split('.')[1]}"
                    for m in MODULES
                    if m.count(".") >= 1 and not _inside(m, "vouch.git", "vouch.errors")
                }
            )
        ),
    ),
    # the gate never pushes into the index
    ([m for m in MODULES if _inside(m, "vouch.gate")], ("vouch.index", "vouch.search")),
]


@pytest.mark.parametrize("importers,forbidden", WALLS)
def test_lower_layers_never_import_upper_ones(
    importers: list[str], forbidden: tuple[str, ...]
) -> None:
    crossing = sorted(
        f"{m} -> {dep}" for m in importers for dep in GRAPH[m] if _inside(dep, *forbidden)
    )
    assert crossing == []


# third-party dependency -> the only vouch modules that may import it
OWNERS = {
    "git": ("vouch.git",),  # GitPython, if it is used at all
    "model2vec": ("vouch.embed.model",),
    "hnswlib": ("vouch.index.graph",),
    "sqlite3": ("vouch.index", "vouch.search"),
    "ruamel": ("vouch.core.yamlio",),
    "frontmatter": ("vouch.core.yamlio",),
    "mcp": ("vouch.servers",),
    "click": ("vouch.cli",),
    # git's processes; and `vouch warm start` (or a search: `vouch.autostart`) starting
    # vouch itself in the background
    "subprocess": ("vouch.git", "vouch.servers.warm", "vouch.autostart"),
}


@pytest.mark.parametrize("dependency", sorted(OWNERS))
def test_each_dependency_has_one_owner(dependency: str) -> None:
    owners = OWNERS[dependency]
    found = sorted(
        m
        for m, deps in GRAPH.items()
        if any(d == dependency or d.startswith(dependency + ".") for d in deps)
        and not _inside(m, *owners)
    )
    assert found == []


def test_pyproject_declares_every_third_party_import() -> None:
    import re
    import sys
    import tomllib
    from importlib.metadata import packages_distributions

    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    runtime = [  # the dependencies and the extras that add features (`hnsw`), not `test`
        *pyproject["project"]["dependencies"],
        *(d for name, group in extras.items() if name != "test" for d in group),
    ]
    declared = {
        re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower().replace("_", "-") for d in runtime
    }
    dists = packages_distributions()
    imported = {d.split(".")[0] for deps in GRAPH.values() for d in deps}
    third = sorted(
        m for m in imported if m not in sys.stdlib_module_names and m not in ("vouch", "__future__")
    )
    undeclared = []
    for module in third:
        names = {n.lower().replace("_", "-") for n in dists.get(module, [module])}
        if not names & declared:
            undeclared.append(f"{module} ({', '.join(sorted(names))})")
    assert undeclared == []


def test_git_is_reached_only_through_vouch_git() -> None:
    """No raw `repo.git(...)`/`git.run(...)` outside `vouch/git/`: every question to git is
    a named `Repo` method there."""
    raw = []
    for name, path in MODULES.items():
        if _inside(name, "vouch.git"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and (
                    node.func.attr == "git"
                    or (
                        node.func.attr in ("run", "run_bytes")
                        and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "git"
                    )
                )
            ):
                raw.append(f"{name}:{node.lineno}")
    assert raw == []
