"""Installing vouch into an agent host's configuration (`vouch install-agent`)."""
