"""The kb.* method registry, the call context and the handlers that adapt it to the core.

Each area declares its methods in its own module here (`METHODS`), registered by
`vouch.ops`."""
