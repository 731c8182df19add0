"""The object kinds, each a module with the same surface; a registry maps name → module."""

from __future__ import annotations

from types import ModuleType

from vouch.errors import UsageError
from vouch.kinds import claim, entity, evidence, page, relation, session, source
from vouch.kinds.base import Chunk, Field, Kind, Obj

MODULES: dict[str, ModuleType] = {
    "source": source,
    "evidence": evidence,
    "claim": claim,
    "entity": entity,
    "relation": relation,
    "page": page,
    "session": session,
}
KINDS: dict[str, Kind] = {name: mod.KIND for name, mod in MODULES.items()}
BY_PLURAL: dict[str, Kind] = {k.plural: k for k in KINDS.values()}

# Kinds whose objects pass through the review gate.
GATED = ("claim", "entity", "relation", "page")


def kind_named(name: str) -> Kind:
    """Accept `claim` or `claims`."""
    found = KINDS.get(name) or BY_PLURAL.get(name)
    if found is None:
        raise UsageError(
            f"unknown kind {name!r}", hint="one of: " + ", ".join(k.plural for k in KINDS.values())
        )
    return found


def module_for(kind: Kind | str) -> ModuleType:
    return MODULES[kind if isinstance(kind, str) else kind.name]


__all__ = [
    "BY_PLURAL",
    "GATED",
    "KINDS",
    "MODULES",
    "Chunk",
    "Field",
    "Kind",
    "Obj",
    "kind_named",
    "module_for",
]
