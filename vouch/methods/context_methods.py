"""The kb.* methods for context packs (issue 12): declarations and handlers."""

from __future__ import annotations

from vouch.methods.shape import Method

METHODS: tuple[Method, ...] = ()
