"""The third unseen set: made-up sessions written without reading the curator's rules."""
