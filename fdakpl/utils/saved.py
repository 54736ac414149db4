"""What model files may hold: every class that can be saved declares the fields it writes and reads.

A class is made savable with the :func:`saved` decorator, which names the fields a file stores for it
(attribute names of its instances: constructor parameters and fitted state) and, with ``defaults``,
the attributes a loaded instance gets instead of what is not stored (caches, training-only state such
as an ``n x n`` kernel matrix). Fields declared on a base class are inherited by the decorated
subclasses. :mod:`fdakpl.io` writes exactly the declared fields of an object and sets exactly them when
it reads one back: a file can neither set another attribute nor name a class that is not registered
here, and no module is loaded by name.

This module imports nothing else of fdakpl, so every layer may declare its classes.

Examples
--------
>>> @saved("sigma", register=False)
... class Width:
...     def __init__(self, sigma):
...         self.sigma = sigma
>>> saved_fields(Width)
('sigma',)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

__all__ = ["registry", "saved", "saved_defaults", "saved_fields", "stable_name"]

T = TypeVar("T", bound=type)

_REGISTRY: dict[str, type] = {}


def stable_name(cls: type) -> str:
    """The name a file stores for a class: ``fdakpl.<ClassName>``, whatever module defines it.

    Examples
    --------
    >>> stable_name(int)
    'fdakpl.int'
    """
    return f"fdakpl.{cls.__qualname__}"


def saved(*fields: str, defaults: Mapping[str, Any] | None = None, register: bool = True) -> Callable[[T], T]:
    """Declare the fields a model file stores for a class (and register the class, unless ``register=False``).

    Parameters
    ----------
    *fields : str
        Attribute names written and read (in addition to those declared by decorated base classes).
    defaults : mapping, optional
        Attributes given to a loaded instance for what is not stored (values are shallow-copied).
    register : bool
        Register the class (``False`` for abstract bases whose fields subclasses inherit).

    Examples
    --------
    >>> from fdakpl.kernels import Gaussian
    >>> saved_fields(Gaussian), registry()["fdakpl.Gaussian"] is Gaussian
    (('sigma',), True)
    """
    def decorate(cls: T) -> T:
        inherited = tuple(cls.__dict__.get("__saved_fields__", getattr(cls, "__saved_fields__", ())))
        cls.__saved_fields__ = inherited + tuple(f for f in fields if f not in inherited)  # type: ignore[attr-defined]
        cls.__saved_defaults__ = {**getattr(cls, "__saved_defaults__", {}), **(defaults or {})}  # type: ignore[attr-defined]
        if register:
            name = stable_name(cls)
            if name in _REGISTRY and _REGISTRY[name] is not cls:
                raise RuntimeError(f"two savable classes are named {name}")
            _REGISTRY[name] = cls
        return cls

    return decorate


def saved_fields(cls: type) -> tuple[str, ...]:
    """The fields a file stores for ``cls`` (empty for a class that declares none).

    Examples
    --------
    >>> saved_fields(int)
    ()
    """
    return tuple(getattr(cls, "__saved_fields__", ()))


def saved_defaults(cls: type) -> dict[str, Any]:
    """Attributes a loaded instance of ``cls`` gets for what is not stored (fresh shallow copies).

    Examples
    --------
    >>> saved_defaults(int)
    {}
    """
    return {k: (v.copy() if hasattr(v, "copy") else v) for k, v in getattr(cls, "__saved_defaults__", {}).items()}


def registry() -> Mapping[str, type]:
    """The classes a model file may name, by stable name (a read-only view).

    Examples
    --------
    >>> "fdakpl.KPLRegressor" in registry()
    True
    """
    return MappingProxyType(_REGISTRY)
