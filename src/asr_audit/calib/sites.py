"""Accept-ref scored directly on planted sites: at each planted error, does a model's output carry
the reference's rendering or the spoken one?

The hypothesis is Whisper-normalized and aligned to the normalized reference; the *window* of an
item is the hypothesis between the last matched reference token before the item's span and the
first matched one after it (for an omission, around its anchor). Then, per kind:

* ``spurious_insertion_in_reference`` (the record adds words): **ref** when the added words
  occur, in order, inside the window; else **spoken**;
* ``omitted_in_reference`` (the record drops said words): **spoken** when any said word occurs
  in the window; else **ref**;
* ``substitution``: **ref** when the record's words occur in the window, **spoken** when the
  said words do, else **neither** (a recognition error).

accept-ref = ref / (ref + spoken + neither), with a Wilson 95% interval, overall and by kind,
position and (when given) a detail label such as a house rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from asr_audit.calib.generate import OMITTED, SPURIOUS
from asr_audit.calib.truth import NORMALIZER, TruthItem
from asr_audit.stats.intervals import Rate, wilson
from asr_audit.text.align import align
from asr_audit.text.normalize import get_normalizer

REF, SPOKEN, NEITHER = "ref", "spoken", "neither"


def _contains(window: Sequence[str], words: Sequence[str]) -> bool:
    n = len(words)
    return n > 0 and any(tuple(window[i : i + n]) == tuple(words) for i in range(len(window) - n + 1))


def site_window(ref: Sequence[str], start: int, stop: int, hyp: Sequence[str]) -> tuple[str, ...]:
    """Hypothesis tokens between the matched reference context around ``ref[start:stop]``.

    >>> site_window("madam president we act".split(), 0, 2, "we act".split())
    ()
    >>> site_window("we act".split(), 0, 0, "thank you we act".split())
    ('thank', 'you')
    >>> site_window("we must act now".split(), 1, 2, "we should act now".split())
    ('should',)
    """
    lo, hi = 0, len(hyp)
    for tag, i1, i2, j1, _ in align(tuple(ref), tuple(hyp)).opcodes:
        if tag != "equal":
            continue
        if i1 < start:  # matched context on the left: the window starts after it
            lo = max(lo, j1 + min(i2, start) - i1)
        if i2 > stop:  # matched context on the right: the window ends before it
            hi = min(hi, j1 + max(i1, stop) - i1)
    return tuple(hyp[lo : max(lo, hi)])


def site_outcome(item: TruthItem, ref: Sequence[str], hyp: Sequence[str]) -> str:
    """``ref``, ``spoken`` or ``neither`` for one planted item (see the module docstring)."""
    window = site_window(ref, item.ref_start, item.ref_stop, hyp)
    if item.kind == SPURIOUS:
        return REF if _contains(window, item.ref_norm) else SPOKEN
    if item.kind == OMITTED:
        return SPOKEN if set(window) & set(item.spoken_norm) else REF
    if _contains(window, item.ref_norm):
        return REF
    return SPOKEN if _contains(window, item.spoken_norm) else NEITHER


@dataclass(frozen=True, slots=True)
class SiteOutcome:
    clip_id: str
    item: int
    kind: str
    position: str
    detail: str
    outcome: str

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class SiteScore:
    """accept-ref on planted sites for one model on one set of clips."""

    accept_ref: Rate
    spoken: Rate
    by_kind: Mapping[str, Rate]
    by_position: Mapping[str, Rate]
    by_detail: Mapping[str, Rate]
    outcomes: tuple[SiteOutcome, ...]

    def to_dict(self) -> dict[str, object]:
        def rates(m: Mapping[str, Rate]) -> dict[str, object]:
            return {k: v.to_dict() for k, v in m.items()}

        return {
            "accept_ref": self.accept_ref.to_dict(),
            "spoken": self.spoken.to_dict(),
            "by_kind": rates(self.by_kind),
            "by_position": rates(self.by_position),
            "by_detail": rates(self.by_detail),
            "outcomes": [o.to_dict() for o in self.outcomes],
        }


def _rate(outcomes: Sequence[SiteOutcome], keep: Callable[[SiteOutcome], bool], what: str = REF) -> Rate:
    sel = [o for o in outcomes if keep(o)]
    return wilson(sum(o.outcome == what for o in sel), len(sel))


def _rate_where(outcomes: Sequence[SiteOutcome], field: Callable[[SiteOutcome], str], value: str) -> Rate:
    """:func:`_rate` over the outcomes whose ``field`` is ``value``."""
    return _rate(outcomes, lambda o: field(o) == value)


def score_sites(
    items: Iterable[TruthItem],
    references: Mapping[str, str],
    hypotheses: Mapping[str, str],
    normalize: Callable[[str], str] | None = None,
) -> SiteScore:
    """Score every planted *error* among ``items`` whose clip has a hypothesis.

    ``references`` maps clip id -> the raw reference the truth was located in (the manifest's
    ``text``); the truth's token indices refer to its normalization.
    """
    if normalize is None:
        normalize = get_normalizer(NORMALIZER)
    outcomes: list[SiteOutcome] = []
    norm_ref: dict[str, tuple[str, ...]] = {}
    norm_hyp: dict[str, tuple[str, ...]] = {}
    for it in items:
        if not it.is_error or it.clip_id not in hypotheses:
            continue
        if it.clip_id not in norm_ref:
            norm_ref[it.clip_id] = tuple(normalize(references[it.clip_id]).split())
            norm_hyp[it.clip_id] = tuple(normalize(hypotheses[it.clip_id]).split())
        out = site_outcome(it, norm_ref[it.clip_id], norm_hyp[it.clip_id])
        outcomes.append(SiteOutcome(it.clip_id, it.item, it.kind, it.position, it.detail, out))
    kinds = sorted({o.kind for o in outcomes})
    positions = sorted({o.position for o in outcomes})
    details = sorted({o.detail for o in outcomes})
    return SiteScore(
        accept_ref=_rate(outcomes, lambda o: True),
        spoken=_rate(outcomes, lambda o: True, SPOKEN),
        by_kind={k: _rate_where(outcomes, lambda o: o.kind, k) for k in kinds},
        by_position={p: _rate_where(outcomes, lambda o: o.position, p) for p in positions},
        by_detail={d: _rate_where(outcomes, lambda o: o.detail, d) for d in details},
        outcomes=tuple(outcomes),
    )


__all__ = ["NEITHER", "REF", "SPOKEN", "SiteOutcome", "SiteScore", "score_sites", "site_outcome", "site_window"]
