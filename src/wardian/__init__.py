"""Wardian: durable, evidence-backed agent memory and declarative automations.

The public surface of the package root is deliberately tiny; import from the
sub-packages (`wardian.memory`, `wardian.blueprints`, …) for everything else.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
