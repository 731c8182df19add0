"""The knowledge store: the files under .vouch/, their commits (landing, direct writes),
sources, evidence, sessions and the audit log."""
