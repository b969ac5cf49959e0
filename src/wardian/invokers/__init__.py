"""wardian.invokers (see DESIGN.md)."""
