"""Provider-independent helpers: partial JSON, validation, handoff, overflow, sanitising."""
