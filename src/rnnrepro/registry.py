"""A tiny name -> constructor registry, one per axis (cells, models, tasks).

An unknown name is an error that lists the known ones, so a typo in a config file
explains itself.
"""
from __future__ import annotations

import inspect
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

    def register(self, name: str, entry: T | None = None):
        """Register ``entry`` under ``name``; usable as a decorator when ``entry`` is omitted."""
        if entry is None:
            def decorate(obj: T) -> T:
                self.register(name, obj)
                return obj
            return decorate
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

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


Constructor = Callable[..., object]
