"""wardian.library (see DESIGN.md)."""
