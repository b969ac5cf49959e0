"""wardian.providers (see DESIGN.md)."""
