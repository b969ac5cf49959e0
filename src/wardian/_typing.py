"""`TYPE_CHECKING` and `NamedTuple` for the modules on the hot commands' path, without
importing `typing` at run time.

Importing `typing` costs a whole process CPU, and each ``class X(NamedTuple)`` more (it
turns every string annotation into a compiled `typing.ForwardRef`); the named tuples on
the path of ``wardian memory save`` / ``recall`` and the SessionStart hook add up to a
noticeable share of those processes' budget (bench/process_bench.py). The modules
on that path take both names from here and import whatever else of `typing` they name in
annotations only, under ``if TYPE_CHECKING:``. tests/cli/test_hot_imports.py runs the
hot commands and fails when `typing` is loaded.

To the type checker `NamedTuple` *is* `typing.NamedTuple` (the re-export below), so mypy
checks these classes as it always has. At run time it is a small base class that builds
the same class `typing.NamedTuple` builds — `collections.namedtuple` of the annotated
fields, with the defaults, the docstring and the methods of the class body — except that
``__annotations__`` keeps the annotation strings as written (`typing.get_type_hints`
evaluates either form). Use it exactly as `typing.NamedTuple` in class syntax, in a
module with ``from __future__ import annotations``: the fields are read from the class
body's ``__annotations__``, which Python 3.14 (PEP 649) fills only under that import. A
class defined without it is refused with a TypeError rather than built without fields
(tests/test_typing_shim.py checks every user of this module has the import).
"""

from __future__ import annotations

TYPE_CHECKING = False
"""False at run time; type checkers treat the name as True (as `typing.TYPE_CHECKING`)."""

__all__ = ["TYPE_CHECKING", "NamedTuple"]

if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    import collections

    # As `typing`'s own lists: names the class body may not set, and names not copied.
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                             "_field_defaults", "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _NamedTupleMeta(type):
        def __new__(mcs, typename, bases, namespace):
            if namespace.get("_wardian_root"):
                return super().__new__(mcs, typename, bases, namespace)
            if bases != (NamedTuple,):
                raise TypeError("can only inherit from NamedTuple alone")
            if "__annotations__" not in namespace and (
                    "__annotate__" in namespace or "__annotate_func__" in namespace):
                # Python 3.14's lazy annotations: the fields exist but are not in the
                # namespace; reading them would need annotationlib (and `typing` itself).
                raise TypeError(f"{typename}: this NamedTuple reads its fields from "
                                "__annotations__; add `from __future__ import annotations` "
                                "to its module")
            fields = list(namespace.get("__annotations__", {}))
            defaults = [name for name in fields if name in namespace]
            if defaults != fields[len(fields) - len(defaults):]:
                raise TypeError(f"{typename}: a field without a default follows one with "
                                f"a default ({', '.join(defaults)})")
            cls = collections.namedtuple(typename, fields,
                                         defaults=[namespace[n] for n in defaults],
                                         module=namespace["__module__"])
            cls.__annotations__ = cls.__new__.__annotations__ = dict(
                namespace.get("__annotations__", {}))
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"Cannot overwrite NamedTuple attribute {key}")
                if key not in _SPECIAL and key not in fields:
                    setattr(cls, key, value)
            return cls

    class NamedTuple(metaclass=_NamedTupleMeta):
        """Base of typed named tuples (class syntax only); see the module docstring."""

        _wardian_root = True
