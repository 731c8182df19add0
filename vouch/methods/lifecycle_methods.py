"""The kb.* lifecycle methods (supersede, contradict, archive, confirm, cite): issue 12."""

from __future__ import annotations

from vouch.methods.shape import Method

METHODS: tuple[Method, ...] = ()
