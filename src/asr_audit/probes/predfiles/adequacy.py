"""Panel adequacy: can this panel's consensus tell a copier from a model that hears better?

Consensus accept-ref on the edits mined for a model is ``pi * c + (1 - pi) * h``
(:mod:`~asr_audit.probes.predfiles.verified`): where the panel misheard (``1 - pi``), a model that
heard right writes the reference and reads "ref". Two numbers say how much of that to expect, and
every refdis output carries them (``panel_adequacy`` in the JSON, the table, the report):

* **WER outside the edits** of every model: its word errors on the reference words outside every
  mined edit (full panel and leave-one-out), so the tested models and the panel members are
  compared on the same words, none of which any edit calls into question. On a clip without an
  edit that is the clip's word error count (the WER's own); on a clip with one, the errors its
  alignment (the difflib opcodes the miner reads) makes outside the edits' spans: a reference word
  outside every span that it deletes or substitutes, and the words it inserts away from an edit
  (a ``replace`` block that meets a span counts only its reference words outside it).
* **replacement agreement**: the share of edits on which at least two panel members wrote the
  same replacement (:attr:`~asr_audit.probes.predfiles.refdis_confidence.EditEvidence.agreement`
  times the panel's size): a panel that misses a word but writes three different things for it
  heard something unclear, not necessarily a reference error.

Warnings: a model more accurate outside the edits than the median member of the panel that mined
its edits (the panel less itself for a member scored leave-one-out), and a panel whose edits
mostly lack replacement agreement.

>>> outside_counts(5, [("equal", 0, 3, 0, 3), ("replace", 3, 5, 3, 4)], {4}, set())
(1, 4)
>>> outside_counts(3, None, {0}, set())  # no hypothesis: every word outside the edits is missed
(2, 2)
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from asr_audit.probes.predfiles.refdis import INSERTION, ClipInput, Edit
from asr_audit.stats.intervals import Rate, wilson
from asr_audit.text.align import Opcode

#: An edit's panel "agrees on the replacement" when at least this many members wrote it.
MIN_AGREEING_MEMBERS = 2
#: Warn when fewer than this share of the edits have replacement agreement.
MIN_AGREEMENT_SHARE = 0.5


def edit_spans(edits: Iterable[Edit]) -> tuple[set[int], set[int]]:
    """The reference positions the edits cover (a run and the range its correction rewrites) and
    the anchors of their insertions."""
    inside: set[int] = set()
    anchors: set[int] = set()
    for e in edits:
        lo, hi, _ = e.fix
        if e.kind == INSERTION:
            anchors.add(lo)
            continue
        inside.update(range(min(lo, e.ref_indices[0]), max(hi, e.ref_indices[-1] + 1)))
    return inside, anchors


def outside_counts(n_ref: int, ops: Sequence[Opcode] | None, inside: set[int], anchors: set[int]) -> tuple[int, int]:
    """``(errors, words)`` of one clip outside the edits: ``words`` = reference positions not in
    ``inside``; ``errors`` = those of them the alignment ``ops`` deletes or substitutes, plus the
    words it inserts away from an edit (an insertion next to a covered position or at an insertion
    anchor belongs to the edit). ``ops`` ``None``: no hypothesis, every such word is missed."""
    words = sum(1 for i in range(n_ref) if i not in inside)
    if ops is None:
        return words, words

    def near(i: int) -> bool:  # an insertion before reference position i touches an edit
        return i in anchors or i in inside or (i - 1) in inside

    errors = 0
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        out = sum(1 for i in range(i1, i2) if i not in inside)
        if tag == "delete":
            errors += out
        elif tag == "insert":
            errors += 0 if near(i1) else j2 - j1
        elif out == i2 - i1 and not near(i1) and not near(i2):  # a replace away from every edit
            errors += max(i2 - i1, j2 - j1)
        else:
            errors += out
    return errors, words


def agreeing(edit: Edit) -> bool | None:
    """Whether at least :data:`MIN_AGREEING_MEMBERS` panel members wrote the edit's replacement
    (``None``: a given edit of the two-reference mode, which has no panel)."""
    if edit.evidence is None or edit.n_panel == 0:
        return None
    return round(edit.evidence.agreement * edit.n_panel) >= MIN_AGREEING_MEMBERS


def agreement_rate(edits: Iterable[Edit]) -> Rate:
    """The share of ``edits`` whose panel agrees on the replacement (:func:`agreeing`)."""
    flags = [a for a in map(agreeing, edits) if a is not None]
    return wilson(sum(flags), len(flags))


@dataclass(frozen=True, slots=True, kw_only=True)
class OutsideWer:
    """One model's word errors outside every mined edit."""

    errors: int
    words: int

    @property
    def wer(self) -> float | None:
        return self.errors / self.words if self.words else None


@dataclass(frozen=True, slots=True, kw_only=True)
class PanelAdequacy:
    """What a refdis run says about its own panel (see the module docstring)."""

    outside: Mapping[str, OutsideWer]  # every scored model and panel member
    panel: tuple[str, ...]
    loo: tuple[str, ...]  # panel members scored leave-one-out
    agreement: Rate  # the full panel's edits with replacement agreement
    model_agreement: Mapping[str, Rate]  # each scored model's edits with replacement agreement

    def wer(self, model: str) -> float | None:
        o = self.outside.get(model)
        return None if o is None else o.wer

    def mining_panel(self, model: str) -> list[str]:
        """The panel members whose edits ``model`` is judged on (the panel less itself under leave-one-out)."""
        return [p for p in self.panel if not (model in self.loo and p == model)]

    def panel_wers(self, model: str) -> list[float]:
        """The WERs outside the edits of the members of ``model``'s mining panel."""
        return [w for p in self.mining_panel(model) if (w := self.wer(p)) is not None]

    def panel_median(self, model: str) -> float | None:
        wers = self.panel_wers(model)
        return statistics.median(wers) if wers else None

    def hears_better(self, model: str) -> bool:
        """Whether ``model`` is more accurate outside the edits than the median member of its panel."""
        own, median = self.wer(model), self.panel_median(model)
        return own is not None and median is not None and own < median

    def warnings(self, models: Sequence[str]) -> list[str]:
        """Plain sentences for each model more accurate than its panel's median member and for a
        panel that mostly disagrees on its replacements."""
        out = []
        for m in models:
            if self.hears_better(m):
                lo, hi = min(self.panel_wers(m)), max(self.panel_wers(m))
                own = self.wer(m)
                assert own is not None
                out.append(
                    f"{m} is more accurate than the median panel member outside the edits ({100 * own:.1f}% WER, "
                    f"panel {100 * lo:.1f}-{100 * hi:.1f}%): many of its edits may be the panel's mishearings, "
                    "where writing the reference is hearing better, not copying"
                )
        a = self.agreement
        if a.n and a.rate < MIN_AGREEMENT_SHARE:
            out.append(
                f"only {a.k} of {a.n} edits ({100 * a.rate:.0f}%) have two panel members agreeing on the replacement: "
                "most edits may be words the panel could not make out, not reference errors"
            )
        return out

    def to_dict(self, models: Sequence[str]) -> dict[str, object]:
        return {
            "wer_outside": {m: {"wer": o.wer, "errors": o.errors, "words": o.words} for m, o in self.outside.items()},
            "panel": list(self.panel),
            "panel_wer_outside_median": self.panel_median(""),
            "agreement": self.agreement.to_dict(),
            "min_agreeing_members": MIN_AGREEING_MEMBERS,
            "warnings": self.warnings(models),
        }

    def model_fields(self, model: str) -> dict[str, object]:
        """The fields a refdis ``models`` entry gains."""
        rate = self.model_agreement.get(model)
        return {
            "wer_outside": self.wer(model),
            "panel_wer_outside": self.panel_wers(model),
            "panel_wer_outside_median": self.panel_median(model),
            "hears_better_than_panel": self.hears_better(model),
            "edit_agreement": None if rate is None or not rate.n else rate.rate,
        }


def panel_adequacy(
    clips: Sequence[ClipInput],
    edits: Sequence[Edit],
    loo_edits: Mapping[str, Sequence[Edit]],
    scored: Mapping[str, Sequence[Edit]],
    panel: Sequence[str],
    models: Sequence[str],
    base: Mapping[str, tuple[int, int]],
    opcodes_of: Callable[[str, ClipInput], Sequence[Opcode]],
) -> PanelAdequacy:
    """:class:`PanelAdequacy` of a run: ``clips`` are the clips with an edit (full panel or
    leave-one-out), ``base[model]`` a model's ``(errors, words)`` summed over the clips with a
    reference and *without* an edit, ``opcodes_of(model, clip)`` its alignment on a clip with an
    edit (called only where it has a hypothesis)."""
    by_clip: dict[str, list[Edit]] = {}
    for edit in [*edits, *(x for es in loo_edits.values() for x in es)]:
        by_clip.setdefault(edit.clip_id, []).append(edit)
    spans = {c.clip_id: edit_spans(by_clip.get(c.clip_id, ())) for c in clips}
    outside: dict[str, OutsideWer] = {}
    for m in dict.fromkeys([*models, *panel]):
        err, words = base.get(m, (0, 0))
        for clip in clips:
            inside, anchors = spans[clip.clip_id]
            hyp = clip.hyps.get(m)
            e, w = outside_counts(len(clip.ref), None if hyp is None else opcodes_of(m, clip), inside, anchors)
            err, words = err + e, words + w
        outside[m] = OutsideWer(errors=int(err), words=int(words))
    return PanelAdequacy(
        outside=outside,
        panel=tuple(panel),
        loo=tuple(m for m in panel if m in loo_edits),
        agreement=agreement_rate(edits),
        model_agreement={m: agreement_rate(scored.get(m, ())) for m in models},
    )


def base_counts(
    columns: Mapping[str, object], row_ids: Sequence[str], edited: Iterable[str]
) -> dict[str, tuple[int, int]]:
    """Each model's ``(errors, words)`` over the rows of its WER columns (``(n_rows, 4)`` arrays:
    errors, words, ...; one row per clip with a reference, ids ``row_ids``) whose clip has no edit."""
    import numpy as np

    skip = set(edited)
    keep = np.array([cid not in skip for cid in row_ids], dtype=bool)
    out = {}
    for m, col in columns.items():
        arr = np.asarray(col)
        if not len(arr):
            out[m] = (0, 0)
            continue
        out[m] = (int(arr[keep, 0].sum()), int(arr[keep, 1].sum()))
    return out
