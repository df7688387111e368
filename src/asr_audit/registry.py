"""One registry shape for every extension point: ``Registry[T]``.

Backends, runner probes, report sections, text normalizers, audio transforms, battery condition
kinds and measures, TTS voices and engines, and aligners are each one :class:`Registry` of named
entries::

    >>> shapes = Registry[int]("shape", fix="pick one")
    >>> shapes.register("square", 4)
    4
    >>> @shapes.register("triangle")
    ... def _three() -> int:
    ...     return 3
    >>> shapes.names()
    ['square', 'triangle']
    >>> "square" in shapes, shapes.get("square")
    (True, 4)
    >>> shapes.get("circle")
    Traceback (most recent call last):
    ...
    asr_audit.errors.ConfigError: unknown shape 'circle'; available shapes: square, triangle; fix: pick one

* :meth:`Registry.register` works as a decorator (``@reg.register("name")``) or as a direct call
  (``reg.register("name", entry)``). A second, different entry under a taken name is an error
  unless ``replace=True``; registering the same entry again (equal, or the same definition
  re-imported) is a no-op.
* :meth:`Registry.get` raises the registry's :class:`~asr_audit.errors.AuditError` subclass
  (``ConfigError`` by default) in one line that lists the valid names and the fix.
* :meth:`Registry.names` is sorted (iterating a registry gives the same); ``name in reg``,
  ``len(reg)`` and :meth:`Registry.items` also load.
* **Lazy loading.** ``modules`` are imported, and ``entry_points`` are loaded, on the first
  ``get`` / ``names`` / ``in`` / ``items``, so that importing a registry never imports the
  (possibly heavy) modules that fill it; those modules import their own heavy dependencies lazily.

**Plugins (entry points).** A registry that names an entry-point group (the backends use
``asr_audit.backends``) also loads, on first use, every entry point of that group: each names a
module whose import registers its entries (of a ``module:attr`` value only the module is imported). A third-party package declares, in its
``pyproject.toml``::

    [project.entry-points."asr_audit.backends"]
    my-model = "my_package.asr_backend"

This is how a layer *above* the registry contributes without the registry naming it:
``asr_audit.models`` sits below ``asr_audit.organism``, so the organism backends are declared as
entry points of asr-audit itself rather than listed in ``models/base.py``.

Entry-point metadata is written at install time, so an editable install made before a new
entry point was declared does not list it until ``pip install -e .`` is run again. So that a
source checkout never silently loses a built-in, the registry also reads the same group from the
``pyproject.toml`` of the checkout it is imported from (only when that file exists and is
asr-audit's own: a wheel install has none and relies on its metadata alone). The declaration in
``pyproject.toml`` is thus the single source of truth in both cases; no module list duplicates it.
We chose this over a higher layer registering itself at import because nothing guarantees that
the higher layer is imported before a lookup (``load_backend("organism-benchmark")`` from a
script imports only ``asr_audit.models``).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

from asr_audit.errors import AuditError, ConfigError

__all__ = ["Registry", "declared_entry_points"]

T = TypeVar("T")
E = TypeVar("E")

_DISTRIBUTION = "asr-audit"


def _origin(entry: object) -> str:
    """How an error names an entry: ``module.qualname`` for functions and classes, else its repr."""
    module, qual = getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)
    if isinstance(module, str) and isinstance(qual, str):
        return f"{module}.{qual}"
    text = repr(entry)
    return text if len(text) <= 80 else text[:77] + "..."


def _same_definition(a: object, b: object) -> bool:
    """``a`` and ``b`` are one entry: the same object, equal, or one definition imported twice."""
    if a is b:
        return True
    try:
        if a == b:
            return True
    except Exception:  # noqa: BLE001 - an entry whose __eq__ fails is simply not equal
        return False
    qa, qb = getattr(a, "__qualname__", None), getattr(b, "__qualname__", None)
    return (
        isinstance(qa, str)
        and qa == qb
        and type(a) is type(b)
        and getattr(a, "__module__", None) == getattr(b, "__module__", None)
    )


def _source_pyproject() -> Path | None:
    """The ``pyproject.toml`` of the asr-audit source checkout this module runs from, if any."""
    candidate = Path(__file__).resolve().parents[2] / "pyproject.toml"
    return candidate if candidate.is_file() else None


def declared_entry_points(group: str, pyproject: Path | None = None) -> list[tuple[str, str]]:
    """``(name, "module[:attr]")`` of ``group`` declared in asr-audit's ``pyproject.toml``.

    ``pyproject`` defaults to the checkout this module is imported from; ``[]`` when there is
    none, when it belongs to another project, or when it declares nothing for ``group``.
    """
    path = pyproject if pyproject is not None else _source_pyproject()
    if path is None:
        return []
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    project = data.get("project", {})
    if not isinstance(project, dict) or project.get("name") != _DISTRIBUTION:
        return []
    table = project.get("entry-points", {}).get(group, {})
    return sorted((str(k), str(v)) for k, v in table.items()) if isinstance(table, dict) else []


def _installed_entry_points(group: str) -> list[tuple[str, str, str]]:
    """``(name, value, distribution)`` of every installed entry point in ``group``."""
    from importlib.metadata import entry_points

    out = []
    for ep in entry_points(group=group):
        dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
        out.append((ep.name, ep.value, dist))
    return sorted(out)


class Registry(Generic[T]):
    """Named entries of one kind (see the module docstring).

    ``kind`` is the singular noun used in messages (``"normalizer"``), ``plural`` its plural
    (default ``kind + "s"``). ``fix`` ends the unknown-name error. ``modules`` are imported and
    the ``entry_points`` group is loaded on first use. ``error`` is the :class:`AuditError`
    subclass raised. ``listing`` overrides how the error lists the valid names (the voices list
    the installed ones first).
    """

    def __init__(
        self,
        kind: str,
        *,
        plural: str | None = None,
        fix: str | None = None,
        modules: Sequence[str] = (),
        entry_points: str | None = None,
        error: type[AuditError] = ConfigError,
        listing: Callable[[], str] | None = None,
    ) -> None:
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self.fix = fix or f"use one of the available {self.plural}"
        self.modules = tuple(modules)
        self.entry_points = entry_points
        self.error = error
        self._listing = listing
        self._entries: dict[str, T] = {}
        self._loaded = False

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._entries)} entries)"

    # ------------------------------------------------------------------ registering

    @overload
    def register(self, name: str, *, replace: bool = False) -> Callable[[E], E]: ...

    @overload
    def register(self, name: str, entry: E, *, replace: bool = False) -> E: ...

    def register(self, name: str, entry: Any = ..., *, replace: bool = False) -> Any:
        """Register ``entry`` under ``name`` and return it; without ``entry``, a decorator.

        A taken name raises ``error`` unless the entry is the same one or ``replace=True``.
        """
        if not isinstance(name, str) or not name.strip():
            raise self.error(f"{self.kind} name {name!r} is empty or not a string; fix: pass a non-empty name")
        if entry is ...:

            def deco(obj: E) -> E:
                self._add(name, obj, replace)  # type: ignore[arg-type]
                return obj

            return deco
        self._add(name, entry, replace)
        return entry

    def _add(self, name: str, entry: T, replace: bool) -> None:
        old = self._entries.get(name)
        if old is not None and not replace and not _same_definition(old, entry):
            raise self.error(
                f"{self.kind} {name!r} is already registered, defined by {_origin(old)}; "
                "fix: choose another name or pass replace=True"
            )
        self._entries[name] = entry

    def unregister(self, name: str) -> T:
        """Remove ``name`` and return its entry (``error`` when it is not registered)."""
        self.load()
        if name not in self._entries:
            raise self.unknown(name)
        return self._entries.pop(name)

    @contextmanager
    def temporary(self) -> Iterator[Registry[T]]:
        """Undo every registration made inside the ``with`` block (for tests and one-off runs)."""
        self.load()
        saved = dict(self._entries)
        try:
            yield self
        finally:
            self._entries.clear()
            self._entries.update(saved)

    # ------------------------------------------------------------------ looking up

    def get(self, name: str) -> T:
        """The entry registered as ``name``; ``error`` listing the valid names otherwise."""
        self.load()
        try:
            return self._entries[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name
            raise self.unknown(name) from None

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self.load()
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs sorted by name."""
        self.load()
        return sorted(self._entries.items(), key=lambda kv: kv[0])

    def __iter__(self) -> Iterator[str]:
        """The registered names, sorted (as :meth:`names`)."""
        return iter(self.names())

    def __len__(self) -> int:
        self.load()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        self.load()
        try:
            return name in self._entries
        except TypeError:
            return False

    def unknown(self, name: object) -> AuditError:
        """The one-line error for an unknown ``name`` (raised by :meth:`get`)."""
        listing = self._listing() if self._listing is not None else ", ".join(self.names()) or "none"
        return self.error(f"unknown {self.kind} {name!r}; available {self.plural}: {listing}; fix: {self.fix}")

    # ------------------------------------------------------------------ lazy loading

    def load(self) -> None:
        """Import ``modules`` and load the ``entry_points`` group (once; later calls do nothing)."""
        if self._loaded:
            return
        self._loaded = True  # first: a loading module may itself look names up
        try:
            for module in self.modules:
                importlib.import_module(module)
            if self.entry_points:
                self._load_entry_points(self.entry_points)
        except BaseException:
            self._loaded = False  # retry next time rather than stay half-loaded
            raise

    def _load_entry_points(self, group: str) -> None:
        seen: set[str] = set()
        found = [(n, v, d) for n, v, d in _installed_entry_points(group)]
        found += [(n, v, f"{_DISTRIBUTION} (source checkout)") for n, v in declared_entry_points(group)]
        for name, value, dist in found:
            module = value.partition(":")[0].strip()
            if module in seen:
                continue
            seen.add(module)
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise self.error(
                    f"{self.kind} plugin {name!r} (entry point {value!r} of {dist}, group {group}) "
                    f"failed to import: {exc}; fix: reinstall or uninstall {dist}"
                ) from exc
