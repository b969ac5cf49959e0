"""Tests for wardian.transcripts."""
