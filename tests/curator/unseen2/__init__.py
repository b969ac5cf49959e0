"""The second unseen set: made-up sessions written before the precision-first rule changes."""
