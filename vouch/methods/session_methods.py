"""The kb.* methods for sessions and crystallize (issue 12): declarations and handlers."""

from __future__ import annotations

from vouch.methods.shape import Method

METHODS: tuple[Method, ...] = ()
