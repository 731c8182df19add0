"""A knowledge graph (`vouch.history.graph`) drawn as mermaid or Graphviz DOT text.

Every word drawn comes from knowledge files, and a proposal's text is hostile input: a
claim reading `"]; click n0 href "javascript:..."` or `%%{init: ...}%%` must stay words
in a box. So no object id or text is ever written as syntax: nodes are named `n0`,
`n1`, ... in order, and each label keeps only letters, digits, spaces and a few inert
marks — every other character (quotes, brackets, backticks, `<`, `>`, `|`, `%`, `#`,
`;`, `&`, markdown's `*`, `_`, `~`, `\\`) is written as mermaid's `#NNN;` entity code, which
mermaid draws as that character and never parses. Labels are one line, cut to
LABEL_CHARS. DOT labels are double-quoted with `\\` and `"` escaped, so an escape
sequence (`\\l`, `\\N`) in a text is drawn, not obeyed.
"""

from __future__ import annotations

from typing import Any

from vouch.core.printable import escaped

LABEL_CHARS = 60
# characters a mermaid label keeps as they are; any other is an entity code
_INERT = frozenset(" .,:-/()?!+=@")
_SHAPES = {  # kind -> (open, close) of a mermaid node
    "claim": ('["', '"]'),
    "entity": ('(["', '"])'),
    "page": ('[["', '"]]'),
    "source": ('[("', '")]'),
    "missing": ('{{"', '"}}'),
}
_PLURAL = {"entity": "entities", "missing": "missing"}
_DOT_SHAPES = {
    "claim": "box",
    "entity": "ellipse",
    "page": "component",
    "source": "cylinder",
    "missing": "hexagon",
}


def _one_line(text: Any, limit: int = LABEL_CHARS) -> str:
    words = " ".join(str(text).split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"


def mermaid_text(text: Any, limit: int = LABEL_CHARS) -> str:
    """Text as a mermaid label's inside: one line, cut, every non-inert character an
    entity code (`#34;` for `"`)."""
    return "".join(
        ch if ch in _INERT or (ch.isalnum() and ch.isascii()) else f"#{ord(ch)};"
        for ch in _one_line(text, limit)
    )


def dot_text(text: Any, limit: int = LABEL_CHARS) -> str:
    """Text as the inside of a double-quoted DOT string (an unprintable character as
    its Python escape, drawn as such)."""
    shown = escaped(_one_line(text, limit))
    return shown.replace("\\", "\\\\").replace('"', '\\"')


def _label(node: dict[str, Any]) -> str:
    words = f"{node['kind']}: {node.get('title') or node['id']}"
    marks = [node["status"]] if node.get("faded") or node.get("status") == "missing" else []
    if node.get("contradicted"):
        marks.append("contradicted")
    if node.get("pending"):
        marks.append(f"pending {node['pending']}")
    return _one_line(words) + (f" ({', '.join(marks)})" if marks else "")


def _edge_label(edge: dict[str, Any]) -> str:
    words = str(edge["kind"]).replace("_", " ")
    if edge.get("locator"):
        words += f" {_one_line(edge['locator'], 24)}"
    if edge.get("pending"):
        words += " (pending)"
    return words


def left_out(graph: dict[str, Any]) -> str | None:
    """What a capped graph left out, in words; None when it shows everything."""
    omitted = graph.get("omitted") or {}
    parts = [
        f"{n} {_PLURAL.get(kind, kind + 's') if n != 1 else kind}"
        for kind, n in sorted((omitted.get("nodes") or {}).items())
    ]
    if omitted.get("edges") or omitted.get("more_edges"):
        parts.append(f"{omitted['edges']}{'+' if omitted.get('more_edges') else ''} edges")
    if omitted.get("hops_not_walked"):
        parts.append(f"the last {omitted['hops_not_walked']} hop(s), not walked")
    if not parts:
        return None
    limits = graph.get("limits") or {}
    return (
        f"not shown: {', '.join(parts)} (limits: {limits.get('max_nodes')} nodes, "
        f"{limits.get('max_edges')} edges; raise --max-nodes / --max-edges, or graph around an id)"
    )


def _names(graph: dict[str, Any]) -> dict[str, str]:
    return {str(n["id"]): f"n{i}" for i, n in enumerate(graph["nodes"])}


def mermaid(graph: dict[str, Any]) -> str:
    """A mermaid flowchart: dashed where superseded, archived or contradicted, a thick
    orange border where pending, and a note saying what a capped graph left out."""
    names = _names(graph)
    lines = [
        f"%% vouch graph: {len(graph['nodes'])} nodes, {len(graph['edges'])} edges",
        "flowchart LR",
    ]
    classes: dict[str, list[str]] = {"faded": [], "pending": [], "contradicted": [], "changed": []}
    for node in graph["nodes"]:
        name = names[str(node["id"])]
        opening, closing = _SHAPES.get(str(node["kind"]), _SHAPES["missing"])
        lines.append(f"  {name}{opening}{mermaid_text(_label(node), 2 * LABEL_CHARS)}{closing}")
        if node.get("faded") or node.get("status") == "missing":
            classes["faded"].append(name)
        if node.get("contradicted"):
            classes["contradicted"].append(name)
        if node.get("pending"):
            classes["pending"].append(name)
        if node.get("changed"):
            classes["changed"].append(name)
    for edge in graph["edges"]:
        a, b = names.get(str(edge["from"])), names.get(str(edge["to"]))
        if a is None or b is None:
            continue
        arrow = "-.->" if edge.get("dashed") or edge.get("pending") else "-->"
        lines.append(f'  {a} {arrow}|"{mermaid_text(_edge_label(edge))}"| {b}')
    note = left_out(graph)
    if note is not None:
        lines.append(f"  %% {mermaid_text(note, 400)}")
        lines.append(f'  omitted>"{mermaid_text(note, 400)}"]')
    lines += [
        "  classDef faded stroke-dasharray: 5 5,color:#777",
        "  classDef contradicted stroke-dasharray: 5 5,stroke:#c00",
        "  classDef pending stroke:#d97706,stroke-width:3px",
        "  classDef changed stroke:#2da44e,stroke-width:3px",
        "  classDef note fill:#fff8dc,stroke:#aaa",
    ]
    for name, members in classes.items():
        if members:
            lines.append(f"  class {','.join(members)} {name}")
    if note is not None:
        lines.append("  class omitted note")
    return "\n".join(lines) + "\n"


def mermaid_block(graph: dict[str, Any]) -> str:
    """The graph as a fenced ```mermaid block (markdown: a pull request draws it)."""
    return "```mermaid\n" + mermaid(graph) + "```\n"


def dot(graph: dict[str, Any]) -> str:
    """A Graphviz digraph, styled as the mermaid one."""
    names = _names(graph)
    lines = [
        "digraph vouch {",
        "  rankdir=LR;",
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for node in graph["nodes"]:
        attrs = [
            f'label="{dot_text(_label(node), 2 * LABEL_CHARS)}"',
            f"shape={_DOT_SHAPES.get(str(node['kind']), 'hexagon')}",
        ]
        if node.get("faded") or node.get("contradicted") or node.get("status") == "missing":
            attrs.append("style=dashed")
        if node.get("pending"):
            attrs += ["color=darkorange", "penwidth=3"]
        lines.append(f"  {names[str(node['id'])]} [{', '.join(attrs)}];")
    for edge in graph["edges"]:
        a, b = names.get(str(edge["from"])), names.get(str(edge["to"]))
        if a is None or b is None:
            continue
        attrs = [f'label="{dot_text(_edge_label(edge))}"']
        if edge.get("dashed") or edge.get("pending"):
            attrs.append("style=dashed")
        lines.append(f"  {a} -> {b} [{', '.join(attrs)}];")
    note = left_out(graph)
    if note is not None:
        lines.append(f'  omitted [shape=note, label="{dot_text(note, 400)}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
