"""Exports: pure functions of store state, returning JSON-ready objects. Writing files is the caller's job."""
