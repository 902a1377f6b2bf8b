"""Hostile input and fault cases: broken framing, cut streams, malformed provider output."""
