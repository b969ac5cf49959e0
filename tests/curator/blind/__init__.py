"""The blind set: made-up sessions for measuring the builtin curator (see build.py)."""
