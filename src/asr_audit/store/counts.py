"""What one store handle saved: decodes computed, reused from the store, and shared within the run.

A :class:`~asr_audit.store.sqlite.Store` owns one :class:`DecodeCounts` (``store.decodes``) and
updates it as it is used, so a run reports what its own handle did (no process-wide state):

* a **computed** result is a key (backend, audio hash, item) of a kind that this handle wrote —
  a transcript decoded, a score or a timing computed, once;
* a **reused** result is a key read from the store that this handle had not written: an earlier
  run (or another process) paid for it;
* a **shared** result is a key read again after this handle wrote it: the same audio asked for
  twice within the run (identical derived audio from another probe or condition, or the same
  audio under two clip ids), answered without a second decode;
* **derived clips** are audio made from a recipe (a battery condition, a masked span:
  :mod:`asr_audit.probes.battery.recipe`): ``derived_known`` counts recipe keys the store already
  mapped to their audio hash (a clip found without building it), ``derived_built`` those built in
  this run (the callers that build them say so, :meth:`DecodeCounts.built`).

Every count is of distinct keys, so re-reading a key (a lookup, then the read-back after a batch)
never counts twice.

>>> c = DecodeCounts()
>>> c.wrote("transcript", [("m", "a1", ""), ("m", "a2", "")])
>>> c.read("transcript", [("m", "a1", ""), ("m", "b", "")])
>>> c.computed(), c.reused(), c.shared()
(2, 1, 1)
>>> c.summary()
'decodes: 2 computed, 1 reused from the store (saved), 1 shared within the run; derived clips: 0 built, 0 found by recipe'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Key = tuple[str, str, str]  # (backend key, audio hash, item)


@dataclass
class DecodeCounts:
    """The counts of one store handle (see the module docstring); mutable, owned by the store."""

    _computed: dict[str, set[Key]] = field(default_factory=dict)
    _reused: dict[str, set[Key]] = field(default_factory=dict)
    _shared: dict[str, set[Key]] = field(default_factory=dict)
    _known: set[str] = field(default_factory=set)
    _built: set[str] = field(default_factory=set)

    def wrote(self, kind: str, keys: Iterable[Key]) -> None:
        """Keys of ``kind`` this handle wrote (computed here)."""
        self._computed.setdefault(kind, set()).update(keys)

    def read(self, kind: str, keys: Iterable[Key]) -> None:
        """Keys of ``kind`` the store answered: shared when this handle wrote them, else reused."""
        mine = self._computed.get(kind, set())
        for key in keys:
            (self._shared if key in mine else self._reused).setdefault(kind, set()).add(key)

    def known(self, recipes: Iterable[str]) -> None:
        """Recipe keys the store's recipe index answered (their audio found without a build)."""
        self._known.update(recipes)

    def built(self, recipes: Iterable[str]) -> None:
        """Recipe keys whose audio was built in this run."""
        self._built.update(recipes)

    def _total(self, table: dict[str, set[Key]], kind: str | None) -> int:
        return sum(len(v) for k, v in table.items() if kind is None or k == kind)

    def computed(self, kind: str | None = None) -> int:
        return self._total(self._computed, kind)

    def reused(self, kind: str | None = None) -> int:
        """Keys read from the store that this handle did not write (shared ones excluded)."""
        return self._total({k: v - self._computed.get(k, set()) for k, v in self._reused.items()}, kind)

    def shared(self, kind: str | None = None) -> int:
        return self._total(self._shared, kind)

    def to_dict(self) -> dict[str, Any]:
        """Per kind and in all, for ``run.json``."""
        kinds = sorted({*self._computed, *self._reused, *self._shared})
        return {
            "computed": self.computed(),
            "reused": self.reused(),
            "shared": self.shared(),
            "derived_built": len(self._built),
            "derived_known": len(self._known - self._built),
            "by_kind": {
                k: {"computed": self.computed(k), "reused": self.reused(k), "shared": self.shared(k)} for k in kinds
            },
        }

    def summary(self) -> str:
        """One line for the end of a run (:func:`describe` of :meth:`to_dict`)."""
        return describe(self.to_dict())


def describe(counts: Mapping[str, Any]) -> str:
    """The line ``asr-audit run`` and ``asr-audit demo`` print from :meth:`DecodeCounts.to_dict`."""
    return (
        f"decodes: {counts['computed']:,} computed, {counts['reused']:,} reused from the store (saved), "
        f"{counts['shared']:,} shared within the run; derived clips: {counts['derived_built']:,} built, "
        f"{counts['derived_known']:,} found by recipe"
    )
