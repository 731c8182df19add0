"""Schema versions and migrations: `vouch migrate plan` shows what upgrading the
committed knowledge to this vouch's schema version changes (`plan`); `vouch migrate
apply` makes that one audited commit, a person's decision (`apply`); the steps, one
small function per version, are registered in `steps`; the version itself, and the
writes a newer one refuses, are `vouch.store.schema`'s."""
