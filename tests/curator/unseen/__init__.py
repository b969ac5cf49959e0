"""The unseen set: plain-worded made-up sessions, written before the rules were changed for them."""
