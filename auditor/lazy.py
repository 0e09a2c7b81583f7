"""`cached_property` without a lock, and `Deferred`: instance attributes made when first read;
`exports`: a package's names imported when first read.

`functools.cached_property` takes an RLock on every first read up to Python 3.11 (3.12 dropped
it); SiteTokens, FieldPlan and LoadedTokenizer compute a dozen such values for each of a run's
thousands of fields, and the lock was a measurable share of a small field's lint
(docs/benchmarks.md). These objects are never
shared between threads while they are built, so a first read computes the value and stores it
in the instance, where every later read finds it without calling the descriptor (as with
functools' own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class cached_property(Generic[T]):  # (the name of the functools one it stands in for)
    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value


class Deferred:
    """A base for instances some of whose attributes are left to be made when first read
    (`defer`): an object read back from the analysis cache or from a pool worker, whose reader
    may never read them. Once made, the value is an ordinary instance attribute."""

    def defer(self, name: str, make: Callable[[], Any]) -> None:
        """Leave attribute `name` to `make()`, called on its first read."""
        self.__dict__.pop(name, None)
        self.__dict__.setdefault("_deferred", {})[name] = make

    def made(self, name: str) -> bool:
        """Whether attribute `name` has its value (set, or made), not left to be made."""
        return name in self.__dict__

    def make_deferred(self) -> None:
        """Make every attribute still left to be made, in the order they were deferred."""
        for name in list(self.__dict__.get("_deferred", ())):
            getattr(self, name)

    def __getattr__(self, name: str) -> Any:  # (only reached for an attribute not set)
        makers = self.__dict__.get("_deferred")
        make = makers.pop(name, None) if makers else None
        if make is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = self.__dict__[name] = make()
        return value


def exports(namespace: dict[str, Any], where: dict[str, str]) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` (PEP 562): each name of ``where`` imported from the
    module it names on first use and kept in the package's ``namespace`` (its ``globals()``), so
    importing one submodule does not import every other one and what they need."""
    import importlib

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(module), name)
        return value

    return __getattr__
