"""Reviewed maintenance: plan schema v1, preview + digest, atomic apply, receipts."""
