"""`wardian._typing.NamedTuple` builds the class `typing.NamedTuple` builds (issue 19: the
hot path's modules use it so as not to import `typing`). Each case defines the same
made-up class body on both bases and compares what a caller can see."""

from __future__ import annotations

import pickle
import typing

import pytest

from wardian import _typing

# Module level, so that pickle can find them by name.


class ShimPoint(_typing.NamedTuple):
    """A point with a label."""

    x: int
    y: int = 0
    label: str | None = None

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)

    def moved(self, dx: int) -> ShimPoint:
        return self._replace(x=self.x + dx)

    @classmethod
    def origin(cls) -> ShimPoint:
        return cls(0)


class TypingPoint(typing.NamedTuple):
    """A point with a label."""

    x: int
    y: int = 0
    label: str | None = None

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)

    def moved(self, dx: int) -> TypingPoint:
        return self._replace(x=self.x + dx)

    @classmethod
    def origin(cls) -> TypingPoint:
        return cls(0)


def test_the_same_class_as_typing_builds() -> None:
    shim, real = ShimPoint(3, -4, "a"), TypingPoint(3, -4, "a")
    assert tuple(shim) == tuple(real) == (3, -4, "a")
    assert isinstance(shim, tuple) and hash(shim) == hash((3, -4, "a"))
    assert ShimPoint._fields == TypingPoint._fields == ("x", "y", "label")
    assert ShimPoint._field_defaults == TypingPoint._field_defaults == {"y": 0,
                                                                         "label": None}
    assert ShimPoint.__doc__ == TypingPoint.__doc__ == "A point with a label."
    assert repr(shim) == repr(real).replace("TypingPoint", "ShimPoint")
    assert ShimPoint.__mro__[1:] == TypingPoint.__mro__[1:] == (tuple, object)
    assert ShimPoint.__module__ == TypingPoint.__module__ == __name__
    assert shim.norm1 == real.norm1 == 7
    assert shim.moved(1) == ShimPoint(4, -4, "a") and type(shim.moved(1)) is ShimPoint
    assert ShimPoint.origin() == (0, 0, None) == ShimPoint(x=0)
    assert shim._asdict() == real._asdict() == {"x": 3, "y": -4, "label": "a"}
    assert ShimPoint._make([1, 2, None]) == (1, 2, None)
    assert pickle.loads(pickle.dumps(shim)) == shim
    assert list(ShimPoint.__annotations__) == list(TypingPoint.__annotations__)
    assert typing.get_type_hints(ShimPoint) == typing.get_type_hints(TypingPoint)
    with pytest.raises(TypeError):
        ShimPoint()  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        shim.x = 1  # type: ignore[misc]


def test_what_typing_refuses_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default follows"):
        class _Order(_typing.NamedTuple):  # a required field after a default
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(AttributeError, match="_replace"):
        class _Prohibited(_typing.NamedTuple):
            a: int

            def _replace(self) -> None:  # type: ignore[misc]
                pass


def test_type_checking_is_false_at_run_time() -> None:
    assert _typing.TYPE_CHECKING is False


def test_lazy_annotations_are_refused_not_dropped() -> None:
    # What Python 3.14 (PEP 649) puts in a class body without `from __future__ import
    # annotations`: an annotate function, no __annotations__. Built as is, the class would
    # have no fields at all.
    def annotate(format: int) -> dict[str, object]:
        return {"a": int}

    meta: type = type(_typing.NamedTuple)  # the shim's metaclass (mypy sees typing's)
    for key in ("__annotate__", "__annotate_func__"):
        with pytest.raises(TypeError, match="from __future__ import annotations"):
            meta("Lazy", (_typing.NamedTuple,), {"__module__": __name__, key: annotate})


def test_every_user_of_the_shim_has_string_annotations() -> None:
    # The run-time guard above fires only on Python 3.14+; this one on every version.
    import ast
    from pathlib import Path

    src = Path(_typing.__file__).parent
    missing = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        uses = any(isinstance(node, ast.ImportFrom) and node.module == "wardian._typing"
                   and any(alias.name == "NamedTuple" for alias in node.names)
                   for node in ast.walk(tree))
        future = any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
                     and any(alias.name == "annotations" for alias in node.names)
                     for node in tree.body)
        if uses and not future:
            missing.append(str(path.relative_to(src)))
    assert not missing, missing
