"""The kb.* methods for lint, doctor, source verify, hooks (issue 13): declarations and handlers."""

from __future__ import annotations

from vouch.methods.shape import Method

METHODS: tuple[Method, ...] = ()
