"""The second blind set: made-up sessions written after the first set's fixes (see build.py)."""
