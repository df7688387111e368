"""The SQLite store satisfies the :class:`~asr_audit.store.base.Store` protocol the layers above use.

mypy checks the structural match (``as_protocol`` below: a ``sqlite.Store`` returned as a
``base.Store``); the tests check it at run time, method by method, signature by signature.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from asr_audit.store import base, sqlite

PROTOCOL_METHODS = (
    "get",
    "get_transcripts",
    "lookup_audio",
    "put",
    "put_transcripts",
    "register_backend",
    "remember_audio",
)


def as_protocol(store: sqlite.Store) -> base.Store:
    """A type error under mypy (which checks tests/) the day the SQLite class stops satisfying the protocol."""
    return store


def _members(cls: type) -> list[str]:
    return sorted(n for n, v in vars(cls).items() if inspect.isfunction(v) and not n.startswith("_"))


def test_the_protocol_has_the_methods_the_layers_above_call() -> None:
    assert tuple(_members(base.Store)) == PROTOCOL_METHODS


def test_the_sqlite_store_is_a_store(tmp_path: Path) -> None:
    with sqlite.Store(tmp_path / "s.sqlite3") as store:
        assert isinstance(as_protocol(store), base.Store)


def test_each_method_has_the_protocols_signature() -> None:
    for name in PROTOCOL_METHODS:
        want = inspect.signature(getattr(base.Store, name))
        got = inspect.signature(getattr(sqlite.Store, name))
        assert list(got.parameters) == list(want.parameters), name
        for p, q in zip(got.parameters.values(), want.parameters.values(), strict=True):
            assert (p.kind, p.default, p.annotation) == (q.kind, q.default, q.annotation), (name, p.name)
        assert got.return_annotation == want.return_annotation, name


def test_an_object_without_the_methods_is_not_a_store() -> None:
    assert not isinstance(object(), base.Store)
