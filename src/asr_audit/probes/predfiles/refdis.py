"""Reference disagreement: mine reference errors with a consensus panel and score each model.

Semantics follow the paper's public scoring code edit for edit (see ``docs/refdis.md``);
on top of it this module adds clip ids, substitution vs deletion, the panel's alternative text,
leave-one-out scoring of panel members, a two-reference mode and a shared alignment cache.

Everything here is pure: inputs are normalized token tuples, outputs are frozen records.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Container, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from asr_audit.options import check
from asr_audit.probes.predfiles.refdis_confidence import DEFAULT_MIN_CONFIDENCE, EditEvidence, edit_confidence
from asr_audit.text.align import (
    Alignment,
    AlignmentCache,
    Opcode,
    Tokens,
    ops_inserted,
    ops_matched,
    ops_missed,
    ops_missed_any,
    ops_replaced_range,
    ops_substitution_at,
)

REF = "ref"
CONSENSUS = "consensus"
OTHER = "other"
Verdict = str | None  # "ref" | "consensus" | "other" | None (ineligible)
_Judge = Callable[..., tuple[str, str]]  # (alignment, bound defaults...) -> (verdict, rendering)

#: A rendering is "close" when its character distance (:func:`char_distance`) to the model's
#: output is at most this; see :func:`closeness_verdict`.
MAX_RENDERING_DISTANCE = 0.5

DELETION, SUBSTITUTION, INSERTION = "deletion", "substitution", "insertion"
START, MIDDLE, END = "start", "middle", "end"


@dataclass(frozen=True, slots=True, kw_only=True)
class RefdisParams:
    """Mining parameters. ``anchor`` reproduces the public code; ``paper`` the paper's setting.

    ``__post_init__`` is their one validator; it names a bad field by its CLI flag, and
    :meth:`asr_audit.probes.predfiles.refdis_options.RefdisOptions.from_mapping` re-words it for a spec.
    """

    majority: float = 0.8
    min_run_len: int = 1
    include_middle: bool = False
    min_ref_match: float = 0.5
    min_consensus_cer: float = 0.30
    min_panel: int = 3
    loo: bool = True
    preset: str | None = "anchor"
    # keep only edits whose confidence (:mod:`~asr_audit.probes.predfiles.refdis_confidence`) is
    # at least this; None keeps every edit (every preset's default: the public code's output)
    min_confidence: float | None = None

    def __post_init__(self) -> None:
        check(
            0 < self.majority <= 1, "majority", self.majority, "must be in (0, 1]", "e.g. 0.8 (anchor) or 0.75 (paper)"
        )
        check(self.min_run_len >= 1, "min_run_len", self.min_run_len, "must be >= 1", "use 1 or more")
        check(0 <= self.min_ref_match <= 1, "min_ref_match", self.min_ref_match, "must be in [0, 1]", "e.g. 0.5")
        check(
            0 <= self.min_consensus_cer <= 1,
            "min_consensus_cer",
            self.min_consensus_cer,
            "must be in [0, 1]",
            "e.g. 0.3",
        )
        check(self.min_panel >= 1, "min_panel", self.min_panel, "must be >= 1", "use 1 or more")
        check(
            self.min_confidence is None or 0 <= self.min_confidence <= 1,
            "min_confidence",
            self.min_confidence,
            "must be in [0, 1]",
            f"e.g. {DEFAULT_MIN_CONFIDENCE} (the calibrated operating point; see docs/calibration.md)",
        )
        check(
            self.preset is None or self.preset in PRESETS,
            "preset",
            self.preset,
            f"is unknown (valid: {', '.join(PRESETS)})",
            f"use one of {', '.join(PRESETS)}",
        )

    def to_dict(self) -> dict[str, object]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

    @property
    def exact_verdicts(self) -> bool:
        """Whether verdicts follow the public code's exact-token rule (``ref`` / ``consensus``
        only): ``--preset anchor --no-loo``, which reproduces the public code. Every other mode
        uses the three-outcome character-closeness rule of :func:`closeness_verdict`."""
        return self.preset == "anchor" and not self.loo

    def min_matched(self, n_ref: int) -> int:
        """Reference words (of ``n_ref``) a model's alignment must reproduce for it to be judged:
        ``int(min_ref_match * n_ref)``."""
        return int(self.min_ref_match * n_ref)


PRESETS: dict[str, dict[str, object]] = {
    "anchor": {"majority": 0.8, "include_middle": False},
    "paper": {"majority": 0.75, "include_middle": True},
}


def loo_quorum(params: RefdisParams) -> int:
    """The fewest members a leave-one-out panel (the panel less one) needs: ``min_panel``, and at
    least 3. Two voters are no consensus: when both miss the word that was said, the held-out
    member who wrote it is judged a copier (null calibration, ``docs/validity.md``: with noisier
    panel models, 34% of honest members flagged). So leave-one-out needs 4 panel models.

    >>> loo_quorum(RefdisParams(min_panel=2)), loo_quorum(RefdisParams(min_panel=4))
    (3, 4)
    """
    return max(params.min_panel, 3)


def preset_params(preset: str = "anchor", **overrides: object) -> RefdisParams:
    """Parameters of a named preset, with explicit overrides (``None`` values are ignored)."""
    check(
        preset in PRESETS,
        "preset",
        preset,
        f"is unknown (valid: {', '.join(PRESETS)})",
        f"use one of {', '.join(PRESETS)}",
    )
    values = {**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}}
    return RefdisParams(preset=preset, **values)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True, kw_only=True)
class Edit:
    """One mined reference error and every model's verdict on it."""

    clip_id: str
    kind: str  # deletion | substitution | insertion
    position: str  # start | middle | end
    ref_tokens: Tokens  # reference words the panel did not say (empty for insertions)
    ref_indices: tuple[int, ...]  # the run's indices; for insertions, the anchor (0 or n)
    alt_text: str  # the panel's rendering ("" for a pure deletion)
    n_panel_agree: int
    n_panel: int
    consensus_cer: float | None  # median panel CER against the reference span (deletion runs)
    miners: tuple[str, ...]  # the panel that mined it
    verdicts: Mapping[str, Verdict]
    renderings: Mapping[str, str]  # what each eligible model wrote at the span
    scored: tuple[str, ...] = ()  # models whose accept-ref counts this edit
    # Where the panel's rendering covers more reference words than the run (its replace opcode
    # reaches past the run): (start, stop, tokens) = the panel wrote ``tokens`` for ref[start:stop].
    # ``None``: the rendering ``alt_text`` replaces exactly ``ref_indices``.
    correction: tuple[int, int, Tokens] | None = None
    # what the panel's transcripts say about the edit, and the confidence computed from it, in [0, 1]
    # (:func:`~asr_audit.probes.predfiles.refdis_confidence.edit_confidence`); None for the edits of
    # the two-reference mode, which are given, not mined
    evidence: EditEvidence | None = None
    confidence: float | None = None

    @property
    def fix(self) -> tuple[int, int, Tokens]:
        """The correction this edit makes: reference ``[start, stop)`` becomes ``tokens``
        (an insertion has ``start == stop`` = its anchor)."""
        if self.correction is not None:
            return self.correction
        alt = tuple(self.alt_text.split())
        if self.kind == INSERTION:
            return self.ref_indices[0], self.ref_indices[0], alt
        return self.ref_indices[0], self.ref_indices[-1] + 1, alt

    @property
    def span_text(self) -> str:
        return " ".join(self.ref_tokens) if self.ref_tokens else self.alt_text

    @property
    def legacy_kind(self) -> str:
        """The public code's kind: ``delete`` (deletions and substitutions) or ``insert``."""
        return "insert" if self.kind == INSERTION else "delete"

    def to_dict(self) -> dict[str, object]:
        return {
            "clip_id": self.clip_id,
            "kind": self.kind,
            "position": self.position,
            "ref_tokens": list(self.ref_tokens),
            "ref_indices": list(self.ref_indices),
            "alt_text": self.alt_text,
            "n_panel_agree": self.n_panel_agree,
            "n_panel": self.n_panel,
            "consensus_cer": self.consensus_cer,
            "confidence": self.confidence,
            **({} if self.evidence is None else {"evidence": self.evidence.to_dict()}),
            "miners": list(self.miners),
            "scored": list(self.scored),
            "verdicts": dict(self.verdicts),
            "renderings": dict(self.renderings),
            **(
                {}
                if self.correction is None
                else {
                    "correction": {
                        "start": self.correction[0],
                        "stop": self.correction[1],
                        "tokens": list(self.correction[2]),
                    }
                }
            ),
        }


@dataclass(frozen=True, slots=True)
class ClipInput:
    """One clip's normalized reference and hypotheses (``None`` = no hypothesis)."""

    clip_id: str
    ref: Tokens
    hyps: Mapping[str, Tokens | None]


class Judge(Protocol):
    """Every judged model's verdict and rendering on one edit of a clip, computed without
    :class:`~asr_audit.text.align.Alignment` objects (:func:`mine_clip`'s ``judge``); it must
    answer what :func:`mine_clip` computes from alignments, for the same models in the same order."""

    def span(
        self, clip: ClipInput, start: int, stop: int, fix: tuple[int, int, Tokens]
    ) -> tuple[dict[str, Verdict], dict[str, str]]:
        """The verdicts on the run ``ref[start:stop]`` whose correction is ``fix``."""
        ...

    def insertion(self, clip: ClipInput, anchor: int, chunk: Tokens) -> tuple[dict[str, Verdict], dict[str, str]]:
        """The verdicts on inserting ``chunk`` at ``anchor`` (0 or the reference's length)."""
        ...


def char_error(a: str, b: str) -> float:
    """The public code's CER: ``1 - matched chars / len(a)`` on whitespace-free strings.

    >>> char_error("e u", "eu")
    0.0
    >>> char_error("", "x"), char_error("ab", "")
    (1.0, 1.0)
    """
    import difflib

    a2, b2 = "".join(a.split()), "".join(b.split())
    if not a2 and not b2:
        return 0.0
    if not a2:
        return 1.0
    sm = difflib.SequenceMatcher(None, a2, b2, autojunk=False)
    return 1.0 - sum(blk.size for blk in sm.get_matching_blocks()) / len(a2)


def char_distance(a: str, b: str) -> float:
    """Normalized character edit distance: Levenshtein distance of ``a`` and ``b`` with all
    whitespace removed, divided by the longer length (0 when both are empty).

    >>> char_distance("wile", "well"), char_distance("fire fighters", "firefighters")
    (0.5, 0.0)
    >>> char_distance("", "just")
    1.0
    """
    from rapidfuzz.distance import Levenshtein

    a2, b2 = "".join(a.split()), "".join(b.split())
    if not a2 and not b2:
        return 0.0
    return Levenshtein.distance(a2, b2) / max(len(a2), len(b2))


def window_renderings(a: Alignment, start: int, stop: int, tokens: Tokens) -> tuple[str, str, str]:
    """What the model, the reference and the correction each say around ``ref[start:stop]``.

    The correction replaces ``ref[start:stop]`` by ``tokens`` (``start == stop`` inserts). The
    window runs from just after the last reference word before ``start`` that the model
    reproduced (an ``equal`` opcode) to just before the first one at or after ``stop``: so a
    misspelled or misaligned rendering (``thank yu`` absorbed into a replacement of the first
    reference word) is compared whole. Returns ``(model, reference, corrected)`` texts over it.

    >>> from asr_audit.text.align import align
    >>> a = align(("we", "agree"), ("wile", "we", "agree"))
    >>> window_renderings(a, 0, 0, ("well",))
    ('wile', '', 'well')
    """
    return window_texts(a.ref, a.hyp, a.opcodes, start, stop, tokens)


def window_texts(
    ref: Tokens, hyp: Tokens, ops: Sequence[Opcode], start: int, stop: int, tokens: Tokens
) -> tuple[str, str, str]:
    """:func:`window_renderings` from the pair's difflib opcodes ``ops`` (no :class:`Alignment`)."""
    lo, jlo, hi, jhi = window_bounds(len(ref), len(hyp), ops, start, stop)
    model = " ".join(hyp[jlo + 1 : jhi])
    reference = " ".join(ref[lo + 1 : hi])
    corrected = " ".join((*ref[lo + 1 : start], *tokens, *ref[stop:hi]))
    return model, reference, corrected


def window_bounds(n_ref: int, n_hyp: int, ops: Sequence[Opcode], start: int, stop: int) -> tuple[int, int, int, int]:
    """``(lo, jlo, hi, jhi)``: the last reference word before ``start`` that the model reproduced
    (an ``equal`` opcode; -1 when none) and where it is in the hypothesis, and the first one at or
    after ``stop`` (``n_ref`` / ``n_hyp`` when none): the window of :func:`window_texts` lies
    strictly between them."""
    lo, jlo, hi, jhi = -1, -1, n_ref, n_hyp
    for tag, i1, i2, j1, _j2 in ops:
        if tag != "equal":
            continue
        if i1 < start:  # last reproduced reference word before the span
            last = min(i2, start) - 1
            lo, jlo = last, j1 + last - i1
        if i2 > stop and hi == n_ref:  # first reproduced reference word at or after stop
            first = max(i1, stop)
            hi, jhi = first, j1 + first - i1
    return lo, jlo, hi, jhi


def run_correction(ref: Tokens, start: int, stop: int, fix: tuple[int, int, Tokens]) -> Tokens:
    """What a correction ``fix`` (``ref[lo:hi]`` becomes ``tokens``, ``lo <= start``, ``stop <= hi``)
    says for the run ``ref[start:stop]`` alone: ``tokens`` less the reference words it keeps on
    either side of the run (a prefix equal to ``ref[lo:start]``, a suffix equal to ``ref[stop:hi]``);
    a side the correction rewrites stays in (its words cannot be told from the run's).

    >>> run_correction(("and", "our", "fire", "men"), 1, 2, (0, 3, ("and", "hour", "fire")))
    ('hour',)
    >>> run_correction(("new", "announcement", "ad"), 2, 3, (1, 3, ("nouncement",)))
    ('nouncement',)
    """
    lo, hi, tokens = fix
    left, right = ref[lo:start], ref[stop:hi]
    out = tokens
    if left and out[: len(left)] == left:
        out = out[len(left) :]
    if right and len(out) >= len(right) and out[len(out) - len(right) :] == right:
        out = out[: len(out) - len(right)]
    return out


def span_closeness(
    ref: Tokens, hyp: Tokens, ops: Sequence[Opcode], start: int, stop: int, fix: tuple[int, int, Tokens]
) -> str:
    """The closeness verdict on the run ``ref[start:stop]`` whose correction is ``fix``, judged on
    the edit's own span.

    When the correction rewrites only words the model did not reproduce, the whole range it
    rewrites is compared (:func:`closeness_of`), as before. When it also rewrites a neighbouring
    reference word that the model reproduced (a panel member's garble reaching past the run:
    "announcement ad" -> "nouncement" for the run "ad"), the model's agreement with the reference
    on that neighbour says nothing about the edit, so the run alone is compared too
    (:func:`run_correction`), and the verdict is ``consensus`` if either comparison says so (a
    model that wrote "firefighters" for the panel's "fire fighters" over "and our firefighters"
    carries the whole correction), ``ref`` only if both do, else ``other``: a neighbour never
    turns an edit into "ref".

    >>> ref = tuple("the government just published a new public service announcement ad".split())
    >>> hyp = tuple("the government is published a new public service announcement".split())
    >>> from asr_audit.text.align import align
    >>> ops = align(ref, hyp).opcodes
    >>> span_closeness(ref, hyp, ops, 9, 10, (8, 10, ("nouncement",)))  # the old window said "ref"
    'other'
    >>> span_closeness(ref, hyp, ops, 9, 10, (9, 10, ()))
    'consensus'
    """
    lo, hi, tokens = fix
    w_lo, _, w_hi, _ = window_bounds(len(ref), len(hyp), ops, start, stop)
    wide = closeness_of(ref, hyp, ops, lo, hi, tokens)
    if w_lo < lo and hi <= w_hi:  # the model reproduced no word the correction rewrites
        return wide
    narrow = closeness_of(ref, hyp, ops, start, stop, run_correction(ref, start, stop, fix))
    if CONSENSUS in (wide, narrow):
        return CONSENSUS
    return REF if wide == narrow == REF else OTHER


def closeness_verdict(a: Alignment, start: int, stop: int, tokens: Tokens) -> str:
    """The three-outcome verdict: does the model carry the reference's rendering or the correction's?

    Over the window of :func:`window_renderings`, ``d_ref`` / ``d_cons`` = :func:`char_distance`
    of the model's text to the reference's / the corrected text. ``consensus`` when
    ``d_cons < d_ref`` and ``d_cons <= MAX_RENDERING_DISTANCE``; ``ref`` when ``d_ref < d_cons``
    and ``d_ref <= MAX_RENDERING_DISTANCE``; otherwise ``other`` (a tie, or neither close: the
    model wrote something else, so the edit says nothing about it and it is not eligible).

    >>> from asr_audit.text.align import align
    >>> closeness_verdict(align(("we", "agree"), ("wile", "we", "agree")), 0, 0, ("well",))
    'consensus'
    >>> closeness_verdict(align(("we", "agree"), ("we", "agree")), 0, 0, ("well",))
    'ref'
    >>> closeness_verdict(align(("we", "agree"), ("so", "we", "agree")), 0, 0, ("well",))
    'other'
    """
    return closeness_of(a.ref, a.hyp, a.opcodes, start, stop, tokens)


def closeness_of(ref: Tokens, hyp: Tokens, ops: Sequence[Opcode], start: int, stop: int, tokens: Tokens) -> str:
    """:func:`closeness_verdict` from the pair's difflib opcodes ``ops`` (no :class:`Alignment`)."""
    model, reference, corrected = window_texts(ref, hyp, ops, start, stop, tokens)
    d_ref, d_cons = char_distance(model, reference), char_distance(model, corrected)
    if d_cons < d_ref and d_cons <= MAX_RENDERING_DISTANCE:
        return CONSENSUS
    if d_ref < d_cons and d_ref <= MAX_RENDERING_DISTANCE:
        return REF
    return OTHER


def _threshold(majority: float, n_panel: int) -> int:
    return max(2, math.ceil(majority * n_panel - 1e-9))


def _most_common_first_seen(items: Sequence[str]) -> tuple[str, int]:
    counts = Counter(items)
    best = max(counts.values())
    for it in items:  # first seen among the most common
        if counts[it] == best:
            return it, best
    raise AssertionError("unreachable")


def agreed_rendering(
    agreeing: Sequence[tuple[Tokens, tuple[Opcode, ...]]], alts: Sequence[str], start: int, stop: int
) -> tuple[str, tuple[Tokens, tuple[Opcode, ...]] | None]:
    """The panel's rendering of the run ``[start, stop)`` and the member whose alignment places it,
    ties broken toward agreement (every mode but the public code's exact rule).

    ``agreeing`` are the members that miss the run, ``alts`` what each wrote there. The rendering
    is the most common one; among equally common ones, the one most members write *for the run
    alone* (their rewrite covers exactly the run, not a neighbour they garbled too), then the first
    seen. Its author is, among the members that wrote it, one whose rewrite covers exactly the run,
    else the most common range (first seen): the majority's, never the first member's garble.

    >>> from asr_audit.text.align import align
    >>> ref = tuple("public service announcement ad".split())
    >>> panel = ["pope service nouncement", "public service announcement", "public service announcement at"]
    >>> agreeing = [(h, align(ref, h).opcodes) for h in (tuple(x.split()) for x in panel)]
    >>> agreed_rendering(agreeing, ["nouncement", "", "at"], 3, 4)[0]  # the first member reaches past the run
    ''
    """
    if not alts:
        return "", None
    ranges = [ops_replaced_range(hyp, ops, start, stop)[:2] for hyp, ops in agreeing]
    counts = Counter(alts)
    best = max(counts.values())
    own = Counter(alt for alt, r in zip(alts, ranges) if r == (start, stop))
    tied = [alt for alt in dict.fromkeys(alts) if counts[alt] == best]
    alt_text = max(tied, key=lambda alt: own[alt])  # max keeps the first of equals: first seen
    wrote = [(pair, r) for pair, alt, r in zip(agreeing, alts, ranges) if alt == alt_text]
    by_range = Counter(r for _, r in wrote)
    chosen = (start, stop) if (start, stop) in by_range else max(by_range, key=lambda r: by_range[r])
    return alt_text, next(pair for pair, r in wrote if r == chosen)


def _runs(votes: Sequence[int], threshold: int, min_len: int) -> list[tuple[int, int]]:
    runs, start = [], None
    for i, v in enumerate([*votes, 0]):
        if v >= threshold and start is None:
            start = i
        elif v < threshold and start is not None:
            if i - start >= min_len:
                runs.append((start, i))
            start = None
    return runs


def _emits(lst: Tokens, chunk: Tokens, at_start: bool) -> bool:
    k = len(chunk)
    if len(lst) < k:
        return False
    return (lst[len(lst) - k :] if at_start else lst[:k]) == chunk


def _insertion_chunk(lists: Sequence[Tokens], at_start: bool, threshold: int) -> Tokens:
    chunk: list[str] = []
    k = 0
    while True:
        column = [lst[len(lst) - 1 - k] if at_start else lst[k] for lst in lists if len(lst) > k]
        if len(column) < threshold:  # no token can have threshold votes (and usually: nobody inserted)
            break
        token, count = _most_common_first_seen(column)
        if count < threshold:
            break
        chunk.append(token)
        k += 1
    return tuple(reversed(chunk)) if at_start else tuple(chunk)


def mine_clip(
    clip: ClipInput,
    panel: Sequence[str],
    models: Sequence[str],
    params: RefdisParams,
    cache: AlignmentCache,
    *,
    scored: tuple[str, ...] = (),
    judge: Judge | None = None,
) -> list[Edit]:
    """Mine one clip's edits with ``panel`` and give every model in ``models`` a verdict
    (``scored``: the edits' :attr:`Edit.scored`). With ``judge``, the verdicts are its answers
    (for ``models``, which it knows) instead of judgements on the models' alignments."""
    ref = clip.ref
    n = len(ref)
    if n == 0:
        return []
    present = [(m, h) for m in panel if (h := clip.hyps.get(m)) is not None]
    if len(present) < params.min_panel:
        return []
    min_matched = params.min_matched(n)
    aligns: dict[str, Alignment | None] = {}  # model -> its alignment if eligible, else None

    def eligible(m: str) -> Alignment | None:
        # The judged models' alignments (without a judge), built on first use: only a clip with
        # edits needs them.
        if m not in aligns:
            hyp = clip.hyps.get(m)
            a = None if hyp is None else cache.align(ref, hyp)
            aligns[m] = a if a is not None and a.matched >= min_matched else None
        return aligns[m]

    # the panel is read from its pairs' opcodes (no Alignment is built for a seeded pair)
    panel_ops: dict[str, tuple[Tokens, tuple[Opcode, ...]]] = {}
    for m, hyp in present:
        ops = cache.pair_opcodes(ref, hyp)
        if ops_matched(ops) >= min_matched:
            panel_ops[m] = (hyp, ops)
    members = list(panel_ops)
    if len(members) < params.min_panel:
        return []
    n_panel = len(members)
    threshold = _threshold(params.majority, n_panel)
    miners = tuple(members)

    def verdicts_for(judge) -> tuple[dict[str, Verdict], dict[str, str]]:  # noqa: ANN001
        verdicts: dict[str, Verdict] = {}
        renders: dict[str, str] = {}
        for m in models:
            a = eligible(m)
            if a is None:
                verdicts[m] = None
            else:
                verdicts[m], renders[m] = judge(a)
        return verdicts, renders

    edits: list[Edit] = []
    votes = [0] * n
    for _, ops in panel_ops.values():
        for i in ops_missed(ops):
            votes[i] += 1
    verdict: _Judge
    for start, stop in _runs(votes, threshold, params.min_run_len):
        if not params.include_middle and start != 0 and stop - 1 != n - 1:
            continue
        text = " ".join(ref[start:stop])
        agreeing = [(hyp, ops) for hyp, ops in panel_ops.values() if ops_missed_any(ops, start, stop)]
        alts = [ops_substitution_at(hyp, ops, start, stop) for hyp, ops in agreeing]
        cers = sorted(cache.memo(("cer", text, alt), lambda a=alt, t=text: char_error(t, a)) for alt in alts)
        median = cers[len(cers) // 2] if cers else 1.0
        if median < params.min_consensus_cer:
            continue
        if params.exact_verdicts:  # the public code: the first seen of the most common renderings
            alt_text, _ = _most_common_first_seen(alts) if alts else ("", 0)
            author = next((pair for pair, alt in zip(agreeing, alts) if alt == alt_text), None)
        else:
            alt_text, author = agreed_rendering(agreeing, alts, start, stop)
        fix = (start, stop, tuple(alt_text.split()))
        if author is not None and (wider := ops_replaced_range(*author, start, stop))[:2] != (start, stop):
            fix = wider  # the rendering replaces more than the run: correct that whole range
        if judge is not None:
            verdicts, renders = judge.span(clip, start, stop, fix)
        else:
            if params.exact_verdicts:
                verdict = lambda a, s=start, e=stop: (CONSENSUS if a.missed_any(s, e) else REF, a.hyp_span(s, e))  # noqa: E731
            else:
                verdict = lambda a, s=start, e=stop, f=fix: (  # noqa: E731
                    span_closeness(a.ref, a.hyp, a.opcodes, s, e, f),
                    a.hyp_span(s, e),
                )
            verdicts, renders = verdicts_for(verdict)
        position = START if start == 0 else END if stop - 1 == n - 1 else MIDDLE
        correction = None if fix == (start, stop, tuple(alt_text.split())) else fix
        evidence = EditEvidence(
            votes=votes[start] / n_panel, agreement=alts.count(alt_text) / n_panel, consensus_cer=round(median, 3)
        )
        edits.append(
            Edit(
                clip_id=clip.clip_id,
                kind=SUBSTITUTION if alt_text else DELETION,
                position=position,
                ref_tokens=ref[start:stop],
                ref_indices=tuple(range(start, stop)),
                alt_text=alt_text,
                n_panel_agree=votes[start],
                n_panel=n_panel,
                consensus_cer=round(median, 3),
                miners=miners,
                verdicts=verdicts,
                renderings=renders,
                correction=correction,
                evidence=evidence,
                confidence=edit_confidence(evidence),
                scored=scored,
            )
        )
    for anchor in (0, n):
        at_start = anchor == 0
        lists = [ops_inserted(hyp, ops, anchor) for hyp, ops in panel_ops.values()]
        if not any(lists):
            continue  # nobody inserted here: the chunk is empty
        chunk = _insertion_chunk(lists, at_start, threshold)
        if len(chunk) < params.min_run_len:
            continue
        n_agree = sum(_emits(lst, chunk, at_start) for lst in lists)
        if n_agree < threshold:
            continue
        if judge is not None:
            verdicts, renders = judge.insertion(clip, anchor, chunk)
        else:
            if params.exact_verdicts:
                verdict = lambda a, anc=anchor, st=at_start, ch=chunk: (  # noqa: E731
                    CONSENSUS if _emits(a.insertions.get(anc, ()), ch, st) else REF,
                    " ".join(a.insertions.get(anc, ())),
                )
            else:
                verdict = lambda a, anc=anchor, ch=chunk: (  # noqa: E731
                    closeness_verdict(a, anc, anc, ch),
                    " ".join(a.insertions.get(anc, ())),
                )
            verdicts, renders = verdicts_for(verdict)
        evidence = EditEvidence(
            # an insertion's agreement is its emitters' share: the members' lists may differ beyond
            # the chunk ("thank you madam president" / "sam que madam president") and still agree on it
            votes=n_agree / n_panel,
            agreement=n_agree / n_panel,
            consensus_cer=None,
        )
        edits.append(
            Edit(
                clip_id=clip.clip_id,
                kind=INSERTION,
                position=START if at_start else END,
                ref_tokens=(),
                ref_indices=(anchor,),
                alt_text=" ".join(chunk),
                n_panel_agree=n_agree,
                n_panel=n_panel,
                consensus_cer=None,
                miners=miners,
                verdicts=verdicts,
                renderings=renders,
                evidence=evidence,
                confidence=edit_confidence(evidence),
                scored=scored,
            )
        )
    return edits


def mine_two_references(
    clip: ClipInput, corrected: Tokens, models: Sequence[str], params: RefdisParams, cache: AlignmentCache
) -> list[Edit]:
    """Edits from the diff of the given reference and a corrected one; every model is judged."""
    ref, n = clip.ref, len(clip.ref)
    if n == 0:
        return []
    min_matched = params.min_matched(n)
    aligns = {
        m: a
        for m in models
        if (h := clip.hyps.get(m)) is not None and (a := cache.align(ref, h)).matched >= min_matched
    }
    edits = []
    judge: _Judge
    ref_tokens: Tokens
    idx: tuple[int, ...]
    for tag, i1, i2, j1, j2 in cache.align(ref, corrected).opcodes:
        if tag == "equal":
            continue
        alt = " ".join(corrected[j1:j2])
        position = START if i1 == 0 else END if i2 >= n else MIDDLE
        if tag == "insert":
            chunk = corrected[j1:j2]
            at_start = i1 == 0
            if params.exact_verdicts:
                judge = (  # noqa: E731
                    lambda a, anc=i1, ch=chunk, st=at_start: (
                        CONSENSUS
                        if (
                            _emits(a.insertions.get(anc, ()), ch, st)
                            if anc in (0, n)
                            else ch == a.insertions.get(anc, ())[: len(ch)]
                        )
                        else REF,
                        " ".join(a.insertions.get(anc, ())),
                    )
                )
            else:
                judge = lambda a, anc=i1, ch=chunk: (  # noqa: E731
                    closeness_verdict(a, anc, anc, ch),
                    " ".join(a.insertions.get(anc, ())),
                )
            kind, ref_tokens, idx = INSERTION, (), (i1,)
        else:
            if params.exact_verdicts:
                judge = lambda a, s=i1, e=i2: (CONSENSUS if a.missed_any(s, e) else REF, a.hyp_span(s, e))  # noqa: E731
            else:
                judge = lambda a, s=i1, e=i2, ch=corrected[j1:j2]: (  # noqa: E731
                    closeness_verdict(a, s, e, ch),
                    a.hyp_span(s, e),
                )
            kind = SUBSTITUTION if tag == "replace" else DELETION
            ref_tokens, idx = ref[i1:i2], tuple(range(i1, i2))
        verdicts: dict[str, Verdict] = {}
        renders: dict[str, str] = {}
        for m in models:
            if m in aligns:
                verdicts[m], renders[m] = judge(aligns[m])
            else:
                verdicts[m] = None
        edits.append(
            Edit(
                clip_id=clip.clip_id,
                kind=kind,
                position=position,
                ref_tokens=ref_tokens,
                ref_indices=idx,
                alt_text=alt,
                n_panel_agree=0,
                n_panel=0,
                consensus_cer=None,
                miners=("corrected-reference",),
                verdicts=verdicts,
                renderings=renders,
                scored=tuple(models),
            )
        )
    return edits


@dataclass(frozen=True, slots=True)
class Mining:
    """All edits of a run: the full panel's, and each held-out member's (leave-one-out)."""

    edits: tuple[Edit, ...]
    loo_edits: Mapping[str, tuple[Edit, ...]] = field(default_factory=dict)

    def scored_edits(self, model: str) -> list[Edit]:
        """The edits ``model`` is judged on."""
        if model in self.loo_edits:
            return list(self.loo_edits[model])
        return [e for e in self.edits if model in e.scored]


def loo_members(panel: Sequence[str], models: Sequence[str], params: RefdisParams) -> list[str]:
    """The panel members :func:`mine` scores leave-one-out (each mined by the panel less itself):
    none when the panel less one is below :func:`loo_quorum` (:func:`loo_unscored`)."""
    loo = params.loo and len(panel) > 1 and loo_unscored(panel, params) is None
    return [m for m in panel if loo and m in models]


def loo_unscored(panel: Sequence[str], params: RefdisParams) -> str | None:
    """Why leave-one-out scores no panel member of ``panel`` (``None`` when it does): the panel
    less one is below :func:`loo_quorum`. Models outside the panel are still scored by the whole
    panel (the paper's rule for a model under test); the members get no accept-ref.

    >>> loo_unscored(["a", "b", "c"], RefdisParams())
    'not scored: leave-one-out would mine its edits with the other 2 panel models, fewer than 3'
    >>> loo_unscored(["a", "b", "c", "d"], RefdisParams()) is None
    True
    """
    quorum = loo_quorum(params)
    if not params.loo or len(panel) - 1 >= quorum:
        return None
    return f"not scored: leave-one-out would mine its edits with the other {len(panel) - 1} panel models, fewer than {quorum}"


def loo_note(panel: Sequence[str], params: RefdisParams) -> str | None:
    """The note a run prints when leave-one-out scores no member of ``panel`` (:func:`loo_unscored`)
    while the panel mines: who is scored, and what would score the members (``None``: nothing to say)."""
    if loo_unscored(panel, params) is None or len(panel) < params.min_panel:
        return None
    return (
        f"note: leave-one-out needs {loo_quorum(params) + 1} panel models to score a panel member; the "
        f"panel ({', '.join(panel)}) gets — and the models outside it are scored by the whole panel "
        "(add a panel model to score the members, or --no-loo for the public code's rule)"
    )


def mine(
    clips: Sequence[ClipInput],
    panel: Sequence[str],
    models: Sequence[str],
    params: RefdisParams,
    cache: AlignmentCache | None = None,
    *,
    references: Mapping[str, Hashable] | None = None,
    candidates: Mapping[str | None, Container[str]] | None = None,
) -> Mining:
    """Mine every clip with the full panel and, with ``params.loo``, with each panel-minus-one.

    A caller that knows which clips can yield an edit (the columnar path's pre-filter,
    :mod:`~asr_audit.probes.predfiles.refdis_columns`) passes only those as ``clips``, every
    clip's reference (or any key equal exactly where the normalized references are equal) as
    ``references`` (the repeat evidence of :func:`with_repeats` counts over all of them), and
    ``candidates``: for the full panel (key ``None``) and each held-out member, the clip ids it
    mines; a clip outside is skipped (it would yield no edit). The result is the same.
    """
    edits, loo_edits = mine_edits(clips, panel, models, params, cache, candidates=candidates)
    refs: Mapping[str, Hashable] = {c.clip_id: c.ref for c in clips} if references is None else references
    return finish_mining(edits, loo_edits, refs, params)


def mine_edits(
    clips: Sequence[ClipInput],
    panel: Sequence[str],
    models: Sequence[str],
    params: RefdisParams,
    cache: AlignmentCache | None = None,
    *,
    candidates: Mapping[str | None, Container[str]] | None = None,
    into: tuple[list[Edit], dict[str, list[Edit]]] | None = None,
    judge_with: Callable[[list[str]], Judge] | None = None,
) -> tuple[list[Edit], dict[str, list[Edit]]]:
    """:func:`mine`'s edits before :func:`finish_mining`: the full panel's and each held-out
    member's, in clip order, appended to ``into`` when given (so clips can be mined in chunks).
    ``judge_with(models)``: the :class:`Judge` of those models that :func:`mine_clip` asks for
    verdicts (else it judges alignments)."""
    cache = AlignmentCache() if cache is None else cache  # an empty cache is falsy (__len__)
    panel = list(panel)
    models = list(models)
    loo = params.loo and len(panel) > 1
    scored_full = tuple(m for m in models if not (loo and m in panel))
    edits, loo_edits = into if into is not None else ([], {m: [] for m in loo_members(panel, models, params)})
    full = None if candidates is None else candidates[None]
    judges: dict[str | None, Judge | None] = {None: None, **dict.fromkeys(loo_edits)}
    if judge_with is not None:
        judges = {None: judge_with(models), **{h: judge_with([h]) for h in loo_edits}}
    for clip in clips:
        if full is None or clip.clip_id in full:
            edits.extend(mine_clip(clip, panel, models, params, cache, scored=scored_full, judge=judges[None]))
        for held in loo_edits:
            if candidates is not None and clip.clip_id not in candidates[held]:
                continue
            reduced = [p for p in panel if p != held]
            loo_edits[held].extend(mine_clip(clip, reduced, [held], params, cache, scored=(held,), judge=judges[held]))
    return edits, loo_edits


def finish_mining(
    edits: Sequence[Edit],
    loo_edits: Mapping[str, Sequence[Edit]],
    references: Mapping[str, Hashable],
    params: RefdisParams,
) -> Mining:
    """The :class:`Mining` of mined edits: repeat evidence over ``references`` (every clip's
    normalized reference, or keys equal where they are), then the operating point."""
    return Mining(
        _operating_point(with_repeats(edits, references), params),
        {m: _operating_point(with_repeats(v, references), params) for m, v in loo_edits.items()},
    )


def with_repeats(edits: Sequence[Edit], references: Mapping[str, Hashable]) -> list[Edit]:
    """``edits`` with the *repeat* evidence (:mod:`~asr_audit.probes.predfiles.refdis_confidence`)
    and its confidence: where ``references`` (clip id -> normalized reference) gives several clips
    the same reference, the share of them on which an edit was mined at the same place (an
    overlapping run, or an insertion at the same anchor; its rendering may differ from reading to
    reading). An edit on a reference that occurs once is returned unchanged.

    >>> e = Edit(clip_id="a", kind=INSERTION, position=START, ref_tokens=(), ref_indices=(0,), alt_text="so",
    ...          n_panel_agree=3, n_panel=3, consensus_cer=None, miners=(), verdicts={}, renderings={},
    ...          evidence=EditEvidence(votes=1.0, agreement=1.0, consensus_cer=None), confidence=1.0)
    >>> [x.evidence.repeat for x in with_repeats([e], {"a": ("we",), "b": ("we",)})]
    [0.5]
    """
    readings = Counter(references.values())
    places: dict[str, list[tuple[bool, int, int]]] = {}  # clip id -> (insertion?, start, stop) of its edits
    for e in edits:
        places.setdefault(e.clip_id, []).append(_place(e))
    by_ref: dict[Hashable, list[str]] = {}
    for cid, tokens in references.items():
        by_ref.setdefault(tokens, []).append(cid)
    out = []
    for e in edits:
        ref = references.get(e.clip_id)
        if e.evidence is None or ref is None or readings[ref] < 2:
            out.append(e)
            continue
        here = _place(e)
        hits = sum(any(_same_place(here, p) for p in places.get(cid, ())) for cid in by_ref[ref])
        evidence = replace(e.evidence, repeat=hits / readings[ref])
        out.append(replace(e, evidence=evidence, confidence=edit_confidence(evidence)))
    return out


def _place(e: Edit) -> tuple[bool, int, int]:
    if e.kind == INSERTION:
        return True, e.ref_indices[0], e.ref_indices[0]
    return False, e.ref_indices[0], e.ref_indices[-1] + 1


def _same_place(a: tuple[bool, int, int], b: tuple[bool, int, int]) -> bool:
    """Two edits at the same place: insertions at one anchor, or runs that overlap."""
    if a[0] != b[0]:
        return False
    return a[1] == b[1] if a[0] else a[1] < b[2] and b[1] < a[2]


def _operating_point(edits: Sequence[Edit], params: RefdisParams) -> tuple[Edit, ...]:
    """The edits whose confidence is at least ``params.min_confidence`` (all when it is None)."""
    if params.min_confidence is None:
        return tuple(edits)
    return tuple(e for e in edits if e.confidence is None or e.confidence >= params.min_confidence)
