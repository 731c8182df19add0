"""The kb.* methods of provenance: why, log, diff, blame — history read from git."""

from __future__ import annotations

from vouch.methods.shape import Cli, Method, Param

MAX_DEPTH = 6  # vouch.history.graph.MAX_DEPTH (not imported: declarations import no handler)

_HUMAN = "vouch.cli.human_provenance:"
_HANDLER = "vouch.methods.provenance:"
_REV = Param("rev", {"type": "string"}, default="HEAD", description="branch, tag or commit")

METHODS: tuple[Method, ...] = (
    Method(
        "kb.why",
        "read",
        "Where a claim, page, entity or relation came from: proposer, approver, evidence "
        "with quotes, supersessions, contradictions, last confirmation.",
        f"{_HANDLER}why",
        (Param("id", {"type": "string"}, required=True, description="object id"),),
        cli=Cli(args=("id",), human=f"{_HUMAN}why"),
    ),
    Method(
        "kb.log",
        "read",
        "The commits that changed one object (or the whole knowledge base), newest first, "
        "each with its audit events.",
        f"{_HANDLER}log",
        (
            Param("id", {"type": "string"}, description="object id; omit for every commit"),
            _REV,
            Param("limit", {"type": "integer", "minimum": 0}, default=50, description="0: all"),
        ),
        cli=Cli(args=("id",), human=f"{_HUMAN}log"),
    ),
    Method(
        "kb.impact",
        "read",
        "What rests on an object: claims citing a source (directly or through an evidence "
        "span), pages listing it, relations with it, claims superseding or contradicting it.",
        f"{_HANDLER}impact",
        (Param("id", {"type": "string"}, required=True, ids=True),),
        cli=Cli(args=("id",), human=f"{_HUMAN}impact"),
    ),
    Method(
        "kb.diff",
        "read",
        "What changes in knowledge between two revisions: claims added, removed, "
        "superseded, archived, re-rated; pages edited by section; decisions.",
        f"{_HANDLER}diff",
        (
            Param(
                "revisions",
                {"type": "string"},
                required=True,
                description="A..B (two commits), A...B (B since it left A) or A (A..HEAD)",
            ),
            Param(
                "graph",
                {"type": "boolean"},
                default=False,
                description="also the knowledge the range adds or changes, with its "
                "neighbours, as a graph (--format markdown draws it)",
            ),
        ),
        cli=Cli(args=("revisions",), emit=f"{_HUMAN}diff"),
    ),
    Method(
        "kb.graph",
        "read",
        "Entities, relations, claims, pages and the sources they cite, as nodes and edges: "
        "around one object (breadth-first to depth) or the whole branch; superseded, "
        "contradicted and pending marked; capped, saying what it left out.",
        f"{_HANDLER}graph",
        (
            Param(
                "id",
                {"type": "string"},
                description="the object at the centre; omit for the whole branch",
                ids=True,
            ),
            Param(
                "depth",
                {"type": "integer", "minimum": 0, "maximum": MAX_DEPTH},
                default=2,
                description="hops from the object",
            ),
            Param(
                "pending",
                {"type": "boolean"},
                default=False,
                description="also what open proposals add, marked pending",
            ),
            Param("max_nodes", {"type": "integer", "minimum": 1, "maximum": 5000}, default=200),
            Param("max_edges", {"type": "integer", "minimum": 0, "maximum": 20000}, default=400),
        ),
        cli=Cli(args=("id",), emit=f"{_HUMAN}graph", format="mermaid", formats=("mermaid", "dot")),
    ),
    Method(
        "kb.blame",
        "read",
        "Each section of a page with the proposal (or commit) that last changed it.",
        f"{_HANDLER}blame",
        (Param("id", {"type": "string"}, required=True, description="page id"), _REV),
        cli=Cli(args=("id",), human=f"{_HUMAN}blame"),
    ),
)
