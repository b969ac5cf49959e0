"""The memory core: records with evidence and revisions, recall, capabilities, maintenance.

Imports nothing above `wardian.config` (DESIGN.md dependency direction).
"""
