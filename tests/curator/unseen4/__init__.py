"""The fourth unseen set: made-up sessions written before reading the curator's rules."""
