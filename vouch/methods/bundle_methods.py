"""The kb.* methods for export and import bundles (issue 13): declarations and handlers."""

from __future__ import annotations

from vouch.methods.shape import Method

METHODS: tuple[Method, ...] = ()
