"""wardian.blueprints (see DESIGN.md)."""
