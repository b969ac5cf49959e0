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
