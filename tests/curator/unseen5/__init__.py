"""The fifth unseen set: made-up sessions written blind to the curator's rules, scored once."""
