"""Shared primitives below everything else: content ids, YAML, atomic files, locks,
configuration."""
