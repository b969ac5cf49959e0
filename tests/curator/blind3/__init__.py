"""The third blind set: styles the corpus lacks, written before any rule change (build.py)."""
