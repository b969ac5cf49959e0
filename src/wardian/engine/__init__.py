"""wardian.engine (see DESIGN.md)."""
