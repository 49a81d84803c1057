"""A tiny name -> constructor registry, one per axis (cells, models, tasks, analyses).

An unknown name is an error that lists the known ones, so a typo in a config file
explains itself. Each entry remembers the module that registered it (:meth:`Registry.module_of`),
from which :mod:`rnnrepro.plan.code_identity` follows the imports to the code a run executes.
:func:`import_all` imports every module of a package, so that a new file registers itself.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Callable, Generic, Iterator, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError):
    """A name that is not in a registry; the message lists the registered names."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class Registry(Generic[T]):
    """Maps names to constructors, e.g. ``CELLS["lstm"](input_size, hidden_size)``."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._modules: dict[str, str] = {}

    def register(self, name: str, entry: T | None = None, *, module: str | None = None):
        """Register ``entry`` under ``name``; usable as a decorator when ``entry`` is omitted.

        ``module``: the module that defines the entry (default: the entry's ``__module__``; a
        ``functools.partial`` registered elsewhere than its class should name its own)."""
        if entry is None:
            def decorate(obj: T) -> T:
                self.register(name, obj, module=module)
                return obj
            return decorate
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        self._modules[name] = module or getattr(entry, "__module__", None) or ""
        return entry

    def module_of(self, name: str) -> str:
        """The dotted name of the module that registered ``name``."""
        self[name]  # an unknown name lists the known ones
        return self._modules[name]

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries))
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known {self.kind}s: {known}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._entries.items())

    def parameters(self, name: str, positional: int = 0) -> list[str]:
        """Keyword parameters of the constructor of ``name``, after ``positional`` leading ones."""
        signature = inspect.signature(self[name])
        names = [p.name for p in signature.parameters.values()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"]
        return [n for n in names[positional:] if n not in ("device", "dtype")]

    def build(self, name: str, *args, **params):
        """Call the constructor of ``name``; an unknown keyword names itself and lists the allowed ones."""
        allowed = self.parameters(name, positional=len(args))
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise ValueError(f"{self.kind} {name!r} has no parameter {', '.join(map(repr, unknown))}; "
                             f"allowed: {', '.join(allowed) or '(none)'}")
        return self[name](*args, **params)


def import_all(package: str, path: list[str]) -> None:
    """Import every module of ``package`` (its ``__name__`` and ``__path__``), so that a module
    added to the folder registers its entries without any other file naming it."""
    for found in sorted(pkgutil.iter_modules(path), key=lambda m: m.name):
        importlib.import_module(f"{package}.{found.name}")


Constructor = Callable[..., object]
