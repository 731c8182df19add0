"""The kb.* methods of the review gate: propose, pending, approve, reject, audit, evidence."""

from __future__ import annotations

from typing import Any

from vouch.kinds import source as source_kind
from vouch.methods.shape import PAGING, Cli, Method, Param, string_list

_HUMAN = "vouch.cli.human:"
_methods: list[Method] = []


def register(method: Method) -> Method:
    """Collect one declaration (the registry registers `METHODS`, in this order)."""
    _methods.append(method)
    return method


_DRY_RUN = Param(
    "dry_run",
    {"type": "boolean"},
    default=False,
    description="validate only; write nothing, not even an audit line",
)
_AGAIN = Param(
    "again",
    {"type": "boolean"},
    default=False,
    description="propose content that was rejected before (the result names who rejected "
    "it and why; without this nothing is proposed)",
)
_SESSION = Param(
    "session_id",
    {"type": "string"},
    description="the open session this proposal belongs to (kb.session_start)",
)
_RATIONALE = Param("rationale", {"type": "string"}, description="why; recorded on the proposal")
_PROPOSED = Cli(emit=f"{_HUMAN}proposed")
_IDS = string_list


def _enum(values: tuple[str, ...]) -> dict[str, Any]:
    """A closed set, stated for clients as a JSON Schema enum (the gate checks it)."""
    return {"type": "string", "enum": list(values)}


def _register_gate() -> None:
    # Enums and ranges are checked by the gate, not by `bind`, so that a bad proposal
    # gets every problem listed at once (valid: false, errors: [...]).
    from vouch.kinds import claim, entity, page, relation

    confidence = Param(
        "confidence",
        {"type": "number", "minimum": 0, "maximum": 1},
        default=claim.KIND.default("confidence"),
        description="0..1",
        checked_later=True,
    )
    register(
        Method(
            "kb.propose_claim",
            "propose",
            "Propose a claim citing sources/evidence (a branch).",
            "vouch.methods.gate:propose_claim",
            (
                Param("text", {"type": "string"}, required=True),
                Param(
                    "evidence",
                    _IDS(),
                    required=True,
                    description="source ids, evidence ids, or <source-id>:L10-L20 pointers "
                    "(a search hit's `cite`); a source may be named by its path instead: "
                    "docs/a.md:L10-L20 (the hit's `cite_path`), docs/a.md",
                    ids=True,
                ),
                Param(
                    "type",
                    _enum(claim.TYPES),
                    default=claim.KIND.default("type"),
                    checked_later=True,
                ),
                confidence,
                Param("entities", _IDS(), ids=True),
                Param("scope", _enum(source_kind.SCOPES), checked_later=True),
                Param("tags", _IDS()),
                _SESSION,
                _RATIONALE,
                _DRY_RUN,
                _AGAIN,
            ),
            writes=True,
            cli=_PROPOSED._replace(
                names={
                    "evidence": ("--evidence", "--source"),
                    "entities": ("--entity",),
                    "session_id": ("--session",),
                },
            ),
        )
    )
    register(
        Method(
            "kb.propose_page",
            "propose",
            "Propose a markdown page.",
            "vouch.methods.gate:propose_page",
            (
                Param("title", {"type": "string"}, required=True),
                Param("body", {"type": "string"}, description="markdown"),
                Param(
                    "type",
                    _enum(page.TYPES),
                    default=page.KIND.default("type"),
                    checked_later=True,
                ),
                Param("claims", _IDS(), ids=True),
                Param("entities", _IDS(), ids=True),
                Param("sources", _IDS(), ids=True),
                Param("tags", _IDS()),
                _SESSION,
                _RATIONALE,
                _DRY_RUN,
                _AGAIN,
            ),
            writes=True,
            cli=_PROPOSED._replace(
                files=("body",),
                names={
                    "claims": ("--claim",),
                    "entities": ("--entity",),
                    "sources": ("--source",),
                    "session_id": ("--session",),
                },
            ),
        )
    )
    register(
        Method(
            "kb.propose_entity",
            "propose",
            "Propose an entity (person, system, concept, ...).",
            "vouch.methods.gate:propose_entity",
            (
                Param("name", {"type": "string"}, required=True),
                Param("type", _enum(entity.TYPES), required=True, checked_later=True),
                Param("aliases", _IDS()),
                Param("description", {"type": "string"}),
                _SESSION,
                _RATIONALE,
                _DRY_RUN,
                _AGAIN,
            ),
            writes=True,
            cli=_PROPOSED._replace(names={"aliases": ("--alias",), "session_id": ("--session",)}),
        )
    )
    register(
        Method(
            "kb.propose_relation",
            "propose",
            "Propose a typed relation between two objects.",
            "vouch.methods.gate:propose_relation",
            (
                Param(
                    "source",
                    {"type": "string"},
                    required=True,
                    description="from this id",
                    ids=True,
                ),
                Param("relation", _enum(relation.TYPES), required=True, checked_later=True),
                Param(
                    "target", {"type": "string"}, required=True, description="to this id", ids=True
                ),
                confidence,
                Param("evidence", _IDS(), ids=True),
                _SESSION,
                _RATIONALE,
                _DRY_RUN,
                _AGAIN,
            ),
            writes=True,
            cli=_PROPOSED._replace(
                names={
                    "source": ("--from",),
                    "relation": ("--rel",),
                    "target": ("--to",),
                    "session_id": ("--session",),
                },
            ),
        )
    )
    register(
        Method(
            "kb.revise_proposal",
            "propose",
            "Revise your open proposal: a new commit on its branch; the id follows the "
            "new content; a reviewer sees (and pins) the new revision.",
            "vouch.methods.gate:revise_proposal",
            (
                Param("proposal_id", {"type": "string"}, required=True),
                Param("text", {"type": "string"}, description="claim text"),
                Param(
                    "evidence",
                    _IDS(),
                    description="claim/relation citations (replace the old ones)",
                    ids=True,
                ),
                Param(
                    "confidence",
                    {"type": "number", "minimum": 0, "maximum": 1},
                    description="0..1",
                    checked_later=True,
                ),
                Param(
                    "type",
                    _enum(tuple(dict.fromkeys((*claim.TYPES, *page.TYPES, *entity.TYPES)))),
                    description="the kind's type (claim, page or entity types)",
                    checked_later=True,
                ),
                Param("tags", _IDS()),
                Param("entities", _IDS(), ids=True),
                Param("title", {"type": "string"}, description="page title"),
                Param("body", {"type": "string"}, description="page markdown"),
                Param("claims", _IDS(), ids=True),
                Param("sources", _IDS(), ids=True),
                Param("name", {"type": "string"}, description="entity name"),
                Param("aliases", _IDS()),
                Param("description", {"type": "string"}, description="entity description"),
                Param("relation", _enum(relation.TYPES), checked_later=True),
                Param("rationale", {"type": "string"}, description="why this revision"),
            ),
            writes=True,
            cli=Cli(
                verb=("revise",),
                args=("proposal_id",),
                files=("body",),
                names={
                    "evidence": ("--evidence", "--source"),
                    "entities": ("--entity",),
                    "claims": ("--claim",),
                    "sources": ("--page-source",),
                    "aliases": ("--alias",),
                },
                emit=f"{_HUMAN}proposed",
            ),
        )
    )
    register(
        Method(
            "kb.comment_proposal",
            "propose",
            "Comment on an open proposal (ask for changes without closing it).",
            "vouch.methods.gate:comment_proposal",
            (
                Param("proposal_id", {"type": "string"}, required=True),
                Param("text", {"type": "string"}, required=True),
            ),
            writes=True,
            cli=Cli(verb=("comment",), args=("proposal_id", "text"), human=f"{_HUMAN}commented"),
        )
    )
    register(
        Method(
            "kb.list_pending",
            "read",
            "Open proposals, oldest first.",
            "vouch.methods.gate:list_pending",
            PAGING,
            cli=Cli(
                verb=("pending",), keys={"filter": ("kind", "proposer")}, human=f"{_HUMAN}pending"
            ),
            agent_read=True,
        )
    )
    register(
        Method(
            "kb.read_proposal",
            "read",
            "One proposal as a reviewer sees it: metadata, object, state, the text each "
            "citation points at, approved look-alikes, and the diff it merges.",
            "vouch.methods.gate:read_proposal",
            (Param("id", {"type": "string"}, required=True, description="proposal id"),),
            cli=Cli(verb=("read", "proposal"), args=("id",), emit="vouch.cli.human_review:emit"),
            agent_read=True,
        )
    )
    register(
        Method(
            "kb.approve",
            "decide",
            "Approve a proposal: merge it into its base branch.",
            "vouch.methods.gate:approve",
            (
                Param("proposal_id", {"type": "string"}, required=True),
                Param("reason", {"type": "string"}),
                Param(
                    "approver",
                    {"type": "string"},
                    description="acts as this approver (trusted callers only)",
                ),
                Param(
                    "expect",
                    {"type": "string"},
                    description="the full id of the proposal commit that was reviewed; refused "
                    "if it differs. Without it, the commit `vouch show` recorded in this clone "
                    "is the pin, and with neither the decision is refused",
                ),
                Param(
                    "together",
                    _IDS(),
                    description="more proposal ids to land with it, all or none, dependencies "
                    "first (linked proposals)",
                ),
            ),
            writes=True,
            cli=Cli(args=("proposal_id",), repeat=True, human=f"{_HUMAN}approved"),
        )
    )
    register(
        Method(
            "kb.reject",
            "decide",
            "Reject a proposal with a reason; its commit is kept.",
            "vouch.methods.gate:reject",
            (
                Param("proposal_id", {"type": "string"}, required=True),
                Param("reason", {"type": "string"}, required=True),
                Param(
                    "expect",
                    {"type": "string"},
                    description="the full id of the proposal commit that was reviewed "
                    "(as for approve)",
                ),
            ),
            writes=True,
            cli=Cli(args=("proposal_id",), human=f"{_HUMAN}rejected"),
        )
    )
    register(
        Method(
            "kb.audit",
            "maintenance",
            "Audit events, oldest first (tail: only the newest N).",
            "vouch.methods.gate:audit_events",
            (
                Param("tail", {"type": "integer", "minimum": 0}),
                Param(
                    "filter",
                    {"type": "object"},
                    description="{event, actor}; event also matches its dotted children",
                ),
            ),
            cli=Cli(keys={"filter": ("event", "actor")}, human=f"{_HUMAN}audit"),
        )
    )
    register(
        Method(
            "kb.audit_verify",
            "maintenance",
            "Check the audit log against git history: hashes, chain, anchors, "
            "merges made without a decision.",
            "vouch.methods.gate:audit_verify",
            (
                Param(
                    "anchor",
                    {"type": "string"},
                    description="compare with this anchor tag (vouch/audit/N) instead of "
                    "the last one",
                ),
            ),
            cli=Cli(verb=("audit-verify",), human=f"{_HUMAN}verified"),
        )
    )
    register(
        Method(
            "kb.audit_anchor",
            "maintenance",
            "Record the committed audit chain's heads in a new tag vouch/audit/N (signed "
            "when this clone signs), outside every branch; publish it for CI to compare.",
            "vouch.methods.gate:audit_anchor",
            writes=True,
            cli=Cli(verb=("audit-anchor",), human=f"{_HUMAN}anchored"),
            decision=True,
        )
    )
    register(
        Method(
            "kb.register_evidence",
            "intake",
            "Store a span pointer into a source (quote checked against its content).",
            "vouch.methods.gate:register_evidence",
            (
                Param(
                    "source_id",
                    {"type": "string"},
                    required=True,
                    description="the source's id, or its path (docs/a.md)",
                    ids=True,
                ),
                Param(
                    "locator",
                    {"type": "string"},
                    required=True,
                    description="L10-L20, L7 or #section-anchor",
                ),
                Param("quote", {"type": "string"}),
            ),
            writes=True,
            cli=Cli(
                verb=("evidence", "add"), args=("source_id", "locator"), human=f"{_HUMAN}identifier"
            ),
        )
    )


_register_gate()

METHODS: tuple[Method, ...] = tuple(_methods)
