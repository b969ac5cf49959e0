"""Tests for the builtin curator (curator-rules)."""
