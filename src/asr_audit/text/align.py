"""Word alignment of a (reference, hypothesis) token pair, computed once and reused.

Two alignments, each matching a reference implementation exactly:

* the *edit* alignment that decides which reference words a hypothesis missed and what it
  inserted: the opcodes of ``difflib.SequenceMatcher(None, ref, hyp, autojunk=False)``, as the
  paper's public code uses;
* the *WER* counts (substitutions, insertions, deletions): Levenshtein counts identical to
  ``kaldialign.edit_distance``. Where only the total is needed (WER inflation),
  :func:`edit_distance` computes it with ``rapidfuzz`` (C++), about 15x faster than
  kaldialign's wrapper and equal to kaldialign's total (see its docstring).

  This is plain word-level Levenshtein WER, **not** the Open ASR Leaderboard's current WER:
  the leaderboard scores with ``kaldialign.batch_error_rate(..., merge_compounds=True)``, which
  counts a compound written split on one side and joined on the other ("white paper" vs
  "whitepaper") as no error. Pass ``merge_compounds=True`` (:func:`wer_counts`,
  :meth:`AlignmentCache.errors`; ``refdis --merge-compounds``) to score as the leaderboard does
  (computed with kaldialign, not rapidfuzz). The leaderboard's other step, its normalizer, is
  the ``oal`` normalizer.

:class:`AlignmentCache` memoizes all three by token tuples, so every probe shares one computation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

Tokens = tuple[str, ...]
Opcode = tuple[str, int, int, int, int]
PairKey = tuple[Tokens, Tokens]  # (reference tokens, hypothesis tokens)


@dataclass(frozen=True, slots=True)
class EditCounts:
    """Levenshtein counts of a hypothesis against a reference (kaldialign semantics)."""

    sub: int
    ins: int
    dele: int
    ref_len: int

    @property
    def errors(self) -> int:
        return self.sub + self.ins + self.dele


def wer_counts(ref: Sequence[str], hyp: Sequence[str], merge_compounds: bool = False) -> EditCounts:
    """Kaldi-compatible edit counts (``merge_compounds``: kaldialign's option of that name).

    >>> wer_counts(("a", "b", "c"), ("a", "x", "c", "d"))
    EditCounts(sub=1, ins=1, dele=0, ref_len=3)
    >>> wer_counts(("a", "white", "paper"), ("a", "whitepaper")).errors
    2
    >>> wer_counts(("a", "white", "paper"), ("a", "whitepaper"), merge_compounds=True).errors
    0
    """
    import kaldialign

    if not ref:
        return EditCounts(0, len(hyp), 0, 0)
    if not hyp:
        return EditCounts(0, 0, len(ref), len(ref))
    if tuple(ref) == tuple(hyp):  # distance 0: kaldialign would count nothing either
        return EditCounts(0, 0, 0, len(ref))
    if merge_compounds:
        d = kaldialign.edit_distance(list(ref), list(hyp), merge_compounds=True)
    else:
        d = kaldialign.edit_distance(list(ref), list(hyp))
    return EditCounts(int(d["sub"]), int(d["ins"]), int(d["del"]), len(ref))


_U64 = (1 << 64) - 1


def _rapidfuzz_key(token: str) -> int:
    """The integer rapidfuzz compares a token of a sequence by: a one-character string's code
    point, any other string's ``hash()`` (as unsigned 64-bit; see rapidfuzz's ``hash_sequence``)."""
    return ord(token) if len(token) == 1 else hash(token) & _U64


class TokenKeys:
    """Tokens seen so far, and whether two of them share a rapidfuzz key.

    rapidfuzz compares the tokens of two sequences by their keys (:func:`_rapidfuzz_key`), not
    by value, so its distance is exact as long as no two distinct tokens compared share a key
    (a 64-bit hash collision: about 1e-10 for a 100,000-word vocabulary, but checked, not
    assumed). :meth:`admit` records a pair's tokens and answers whether every token recorded
    so far has a key of its own; once a collision is seen it stays False.
    """

    __slots__ = ("seen", "owner", "collision")

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.owner: dict[int, str] = {}
        self.collision = False

    def admit(self, ref: Sequence[str], hyp: Sequence[str]) -> bool:
        seen = self.seen
        if not (seen.issuperset(ref) and seen.issuperset(hyp)):
            owner = self.owner
            for t in (*ref, *hyp):
                if t not in seen:
                    seen.add(t)
                    k = _rapidfuzz_key(t)
                    if owner.setdefault(k, t) != t:
                        self.collision = True
        return not self.collision


def _distance(ref: Sequence[str], hyp: Sequence[str], keys: TokenKeys, distance: Callable[..., Any]) -> int:
    """:func:`edit_distance` with the token keys ``keys`` seen so far and rapidfuzz's
    ``Levenshtein.distance`` (imported once by the caller: :func:`_levenshtein`)."""
    if not ref:
        return len(hyp)
    if not hyp:
        return len(ref)
    if tuple(ref) == tuple(hyp):
        return 0
    if keys.admit(ref, hyp):
        return int(distance(ref, hyp))
    return wer_counts(ref, hyp).errors


def _levenshtein() -> Callable[..., Any]:
    """rapidfuzz's ``Levenshtein.distance``, imported on first use (~9 ms, not at start-up)."""
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance


def edit_distance(ref: Sequence[str], hyp: Sequence[str]) -> int:
    """Word-level Levenshtein distance: ``wer_counts(ref, hyp).errors``, computed faster.

    Any minimal alignment has the same total cost (unit weights), so rapidfuzz's distance equals
    kaldialign's ``sub + ins + del`` (``tests/text/test_edit_distance.py`` checks it with
    Hypothesis). Falls back to kaldialign when two distinct tokens share a rapidfuzz key.

    >>> edit_distance(("a", "b", "c"), ("a", "x", "c", "d"))
    2
    """
    return _distance(ref, hyp, TokenKeys(), _levenshtein())


def edit_distances(pairs: Iterable[tuple[Sequence[str], Sequence[str]]]) -> list[int]:
    """:func:`edit_distance` of each pair, with one token-key check shared by all (faster on many).

    >>> edit_distances([(("a", "b"), ("a", "c")), ((), ("x",))])
    [1, 1]
    """
    keys, distance = TokenKeys(), _levenshtein()  # one import for all pairs, not one per pair
    return [_distance(ref, hyp, keys, distance) for ref, hyp in pairs]


@dataclass(frozen=True, slots=True)
class Alignment:
    """The difflib alignment of one hypothesis against one reference, with derived views."""

    ref: Tokens
    hyp: Tokens
    opcodes: tuple[Opcode, ...]
    missed: frozenset[int]  # reference indices inside delete / replace opcodes
    matched: int  # reference tokens inside equal blocks
    insertions: Mapping[int, Tokens] = field(default_factory=dict)  # anchor i1 -> inserted tokens

    def substitution_at(self, start: int, stop: int) -> str:
        """Hypothesis tokens of every ``replace`` opcode whose reference range meets [start, stop)
        (:func:`ops_substitution_at`)."""
        return ops_substitution_at(self.hyp, self.opcodes, start, stop)

    def replaced_range(self, start: int, stop: int) -> tuple[int, int, Tokens]:
        """The reference range the hypothesis rewrites around [start, stop), and its words there
        (:func:`ops_replaced_range`).

        >>> a = align(("and", "our", "firefighters", "came"), ("fire", "fighters", "came"))
        >>> a.replaced_range(0, 2)
        (0, 3, ('fire', 'fighters'))
        """
        return ops_replaced_range(self.hyp, self.opcodes, start, stop)

    def missed_any(self, start: int, stop: int) -> bool:
        """Whether any reference index in [start, stop) was missed (:func:`ops_missed_any`)."""
        return ops_missed_any(self.opcodes, start, stop)

    def hyp_span(self, start: int, stop: int) -> str:
        """What the hypothesis says in place of reference [start, stop) (equal or replaced text)."""
        return ops_span(self.hyp, self.opcodes, start, stop)[1]


# The views below compute an :class:`Alignment`'s answers from the pair's difflib opcodes alone
# (opcodes run in reference order and tile it), so a caller holding stored opcodes (refdis' warm
# mining) needs no Alignment object; the Alignment's methods call them.


def ops_matched(ops: Sequence[Opcode]) -> int:
    """:attr:`Alignment.matched`: the reference tokens inside ``equal`` opcodes.

    >>> ops_matched([("equal", 0, 2, 0, 2), ("delete", 2, 3, 2, 2), ("equal", 3, 4, 2, 3)])
    3
    """
    matched = 0
    for tag, i1, i2, _, _ in ops:
        if tag == "equal":
            matched += i2 - i1
    return matched


def ops_missed(ops: Sequence[Opcode]) -> list[int]:
    """:attr:`Alignment.missed`, in order: the reference indices inside ``delete`` / ``replace`` opcodes.

    >>> ops_missed([("equal", 0, 1, 0, 1), ("replace", 1, 3, 1, 2), ("insert", 3, 3, 2, 3)])
    [1, 2]
    """
    missed: list[int] = []
    for tag, i1, i2, _, _ in ops:
        if tag == "delete" or tag == "replace":
            missed.extend(range(i1, i2))
    return missed


def ops_missed_any(ops: Sequence[Opcode], start: int, stop: int) -> bool:
    """:meth:`Alignment.missed_any`: whether a ``delete`` / ``replace`` opcode meets reference [start, stop).

    >>> ops = [("equal", 0, 1, 0, 1), ("delete", 1, 2, 1, 1)]
    >>> ops_missed_any(ops, 0, 1), ops_missed_any(ops, 0, 2), ops_missed_any(ops, 1, 1)
    (False, True, False)
    """
    if start >= stop:
        return False
    for tag, i1, i2, _, _ in ops:
        if i1 >= stop:
            return False  # opcodes run in reference order: none further meets the span
        if start < i2 and (tag == "delete" or tag == "replace"):
            return True
    return False


def ops_substitution_at(hyp: Tokens, ops: Sequence[Opcode], start: int, stop: int) -> str:
    """:meth:`Alignment.substitution_at`: the hypothesis tokens of every ``replace`` opcode whose
    reference range meets [start, stop), joined.

    >>> ops_substitution_at(("we", "do"), [("equal", 0, 1, 0, 1), ("replace", 1, 3, 1, 2)], 2, 3)
    'do'
    """
    parts = [" ".join(hyp[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag == "replace" and i1 < stop and start < i2]
    return " ".join(parts)


def ops_replaced_range(hyp: Tokens, ops: Sequence[Opcode], start: int, stop: int) -> tuple[int, int, Tokens]:
    """:meth:`Alignment.replaced_range`: the reference range the hypothesis rewrites around
    [start, stop), and its words there.

    :func:`ops_substitution_at` returns the text of every ``replace`` opcode meeting the span,
    and such an opcode can reach past it (``and our firefighters`` -> ``fire fighters`` for
    the span ``and our``): pasting that text over the span alone would keep
    ``firefighters`` twice. This returns ``(lo, hi, words)``: ``lo``/``hi`` cover the span and
    every ``replace`` opcode meeting it, ``words`` is what the hypothesis says for
    ``ref[lo:hi]`` (a contiguous slice of it).
    """
    lo, hi = start, stop
    for tag, i1, i2, _, _ in ops:
        if tag == "replace" and i1 < stop and start < i2:
            lo, hi = min(lo, i1), max(hi, i2)
    parts: list[tuple[int, int]] = []  # hypothesis ranges of the opcodes inside [lo, hi)
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            a, b = max(lo, i1), min(hi, i2)
            if a < b:
                parts.append((j1 + a - i1, j1 + b - i1))
        elif tag == "insert":
            if lo < i1 < hi:  # insertions at the range's edges belong to its neighbours
                parts.append((j1, j2))
        elif lo <= i1 and i2 <= hi:
            parts.append((j1, j2))
    jlo = min((a for a, _ in parts), default=None)
    jhi = max((b for _, b in parts), default=None)
    return lo, hi, () if jlo is None else hyp[jlo:jhi]


def ops_span(hyp: Tokens, ops: Sequence[Opcode], start: int, stop: int) -> tuple[bool, str]:
    """``(missed_any(start, stop), hyp_span(start, stop))`` of the pair's
    :class:`Alignment`, from its opcodes in one pass: whether a ``delete``
    or ``replace`` opcode meets reference [start, stop), and what the hypothesis says there.

    >>> ops_span(("we", "do"), [("equal", 0, 1, 0, 1), ("replace", 1, 3, 1, 2)], 1, 2)
    (True, 'do')
    """
    missed = False
    parts = []
    for tag, i1, i2, j1, j2 in ops:
        if i1 >= stop:
            break  # opcodes run in reference order: none further meets the span
        if start < i2:
            if tag == "equal":
                parts.append(" ".join(hyp[j1 + max(start, i1) - i1 : j1 + min(stop, i2) - i1]))
            elif tag == "replace":
                missed = True
                parts.append(" ".join(hyp[j1:j2]))
            elif tag == "delete":
                missed = True
    return missed, " ".join(filter(None, parts))


def ops_inserted(hyp: Tokens, ops: Sequence[Opcode], anchor: int) -> Tokens:
    """``Alignment.insertions.get(anchor, ())`` from the opcodes: the words inserted at ``anchor``.

    Opcodes run in reference order and an ``insert`` is never next to another, so at most one
    sits at an anchor: at the clip's edges (refdis' insertions) it can only be the first opcode
    (``anchor == 0``) or the last (``anchor`` at the reference's end), read without a scan.

    >>> ops = [("insert", 0, 0, 0, 1), ("equal", 0, 2, 1, 3), ("insert", 2, 2, 3, 5)]
    >>> hyp = ("so", "we", "do", "thank", "you")
    >>> ops_inserted(hyp, ops, 0), ops_inserted(hyp, ops, 1), ops_inserted(hyp, ops, 2)
    (('so',), (), ('thank', 'you'))
    """
    if not ops:
        return ()
    if anchor == 0:
        tag, i1, _, j1, j2 = ops[0]
        return hyp[j1:j2] if tag == "insert" and i1 == 0 else ()
    tag, i1, i2, j1, j2 = ops[-1]
    if anchor >= i2:  # at or past the reference's end
        return hyp[j1:j2] if tag == "insert" and i1 == anchor else ()
    for tag, i1, _, j1, j2 in ops:
        if i1 > anchor:
            break
        if tag == "insert" and i1 == anchor:
            return hyp[j1:j2]
    return ()


def opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """``difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()``, computed faster.

    The same algorithm, step for step, less what cannot run without junk: with ``isjunk=None``
    and ``autojunk=False`` the matcher's junk and popular sets are empty, so its junk-extension
    loops never run, and the non-junk extension loops cannot extend a block that is already the
    longest run ending at its last cell. What remains is run inline: the ``b2j`` index,
    ``find_longest_match`` (longest block; ties to the smallest ``i``, then ``j``) on a stack of
    ranges in the order difflib uses, the sorted block list with adjacent blocks merged, and the
    opcode walk. ``tests/testing/test_align_exact.py`` checks it against difflib (Hypothesis).

    >>> opcodes(("a", "b", "c"), ("a", "x", "c", "d"))
    [('equal', 0, 1, 0, 1), ('replace', 1, 2, 1, 2), ('equal', 2, 3, 2, 3), ('insert', 3, 3, 3, 4)]
    """
    la, lb = len(a), len(b)
    b2j: dict[str, list[int]] = {}
    for j, x in enumerate(b):
        b2j.setdefault(x, []).append(j)
    b2j_get = b2j.get
    no_positions: list[int] = []
    blocks: list[tuple[int, int, int]] = []
    queue = [(0, la, 0, lb)]
    while queue:
        alo, ahi, blo, bhi = queue.pop()
        besti, bestj, bestsize = alo, blo, 0
        j2len: dict[int, int] = {}
        for i in range(alo, ahi):  # find_longest_match
            new_j2len: dict[int, int] = {}
            j2len_get = j2len.get
            for j in b2j_get(a[i], no_positions):
                if j < blo:
                    continue
                if j >= bhi:
                    break
                k = new_j2len[j] = j2len_get(j - 1, 0) + 1
                if k > bestsize:
                    besti, bestj, bestsize = i - k + 1, j - k + 1, k
            j2len = new_j2len
        if bestsize:
            blocks.append((besti, bestj, bestsize))
            if alo < besti and blo < bestj:
                queue.append((alo, besti, blo, bestj))
            if besti + bestsize < ahi and bestj + bestsize < bhi:
                queue.append((besti + bestsize, ahi, bestj + bestsize, bhi))
    blocks.sort()
    merged: list[tuple[int, int, int]] = []
    i1 = j1 = k1 = 0
    for i2, j2, k2 in blocks:  # merge adjacent blocks, as get_matching_blocks does
        if i1 + k1 == i2 and j1 + k1 == j2:
            k1 += k2
        else:
            if k1:
                merged.append((i1, j1, k1))
            i1, j1, k1 = i2, j2, k2
    if k1:
        merged.append((i1, j1, k1))
    merged.append((la, lb, 0))
    ops: list[Opcode] = []
    i = j = 0
    for ai, bj, size in merged:
        if i < ai and j < bj:
            ops.append(("replace", i, ai, j, bj))
        elif i < ai:
            ops.append(("delete", i, ai, j, bj))
        elif j < bj:
            ops.append(("insert", i, ai, j, bj))
        i, j = ai + size, bj + size
        if size:
            ops.append(("equal", ai, i, bj, j))
    return ops


def align(ref: Sequence[str], hyp: Sequence[str]) -> Alignment:
    """Align token sequences exactly as ``SequenceMatcher(None, ref, hyp, autojunk=False)``.

    >>> a = align(("madam", "president", "we", "agree"), ("we", "agree"))
    >>> sorted(a.missed), a.matched
    ([0, 1], 2)
    >>> align(("we", "agree"), ("thank", "you", "we", "agree")).insertions
    {0: ('thank', 'you')}
    """
    ref_t, hyp_t = tuple(ref), tuple(hyp)
    if ref_t == hyp_t:
        ops: list[Opcode] = [("equal", 0, len(ref_t), 0, len(hyp_t))] if ref_t else []
    else:
        ops = opcodes(ref_t, hyp_t)
    return alignment_from_opcodes(ref_t, hyp_t, ops)


def alignment_from_opcodes(ref_t: Tokens, hyp_t: Tokens, ops: Sequence[Opcode]) -> Alignment:
    """The :class:`Alignment` of ``ref_t`` and ``hyp_t`` given their difflib opcodes (computed
    earlier, e.g. read back from the persistent text cache); :func:`align` ends here."""
    insertions: dict[int, list[str]] = {}
    for tag, i1, _, j1, j2 in ops:
        if tag == "insert":
            insertions.setdefault(i1, []).extend(hyp_t[j1:j2])
    inserted = {k: tuple(v) for k, v in insertions.items()} if insertions else _NO_INSERTIONS
    return Alignment(ref_t, hyp_t, tuple(ops), frozenset(ops_missed(ops)), ops_matched(ops), inserted)


# most alignments insert nothing: they share one read-only empty mapping (a dict each is 64 bytes
# times every (reference, hypothesis) pair of a run)
_NO_INSERTIONS: Mapping[int, Tokens] = MappingProxyType({})


_MISSING = object()


class AlignmentCache:
    """Memoized :func:`align`, :func:`wer_counts` and :func:`edit_distance` keyed by token tuples."""

    def __init__(self) -> None:
        self._align: dict[tuple[Tokens, Tokens], Alignment] = {}
        self._wer: dict[tuple[Tokens, Tokens], EditCounts] = {}
        self._errors: dict[tuple[Tokens, Tokens], int] = {}
        self._merged: dict[tuple[Tokens, Tokens], int] = {}  # errors with merge_compounds=True
        self._keys = TokenKeys()  # one vocabulary check for every pair this cache sees
        self._tokens: dict[str, Tokens] = {}
        self._interned: dict[Tokens, Tokens] = {}
        self._words: dict[str, str] = {}  # one object per distinct token
        self._memo: dict[tuple[object, ...], object] = {}
        self._pending: dict[PairKey, tuple[Opcode, ...]] = {}  # opcodes known, not yet built
        self._fresh: list[tuple[str, PairKey]] = []  # results computed here (not seeded), in order

    def memo(self, key: tuple[object, ...], compute):  # noqa: ANN001, ANN201
        """``compute()`` the first time ``key`` is seen, the stored value after (any pure result
        of the cached pairs, e.g. a character error rate); keys should start with a tag."""
        hit = self._memo.get(key, _MISSING)
        if hit is _MISSING:
            hit = self._memo[key] = compute()
        return hit

    def tokens(self, text: str) -> Tokens:
        """:func:`tokens` of ``text``, the same tuple object every time for the same text.

        Sharing token tuples makes the pair look-ups below cheap: dict keys compare by
        identity first, so a reused tuple never has its words compared again. The words are
        shared too (one string object per distinct token across every tuple of the cache): a
        million transcripts hold a vocabulary of words, not thirty million copies of them.
        """
        hit = self._tokens.get(text)
        if hit is None:
            words = text.split()
            hit = self._tokens[text] = self.intern(tuple(map(self._words.setdefault, words, words)))
        return hit

    def intern(self, toks: Tokens) -> Tokens:
        """The cache's own tuple equal to ``toks`` (``toks`` itself the first time)."""
        return self._interned.setdefault(toks, toks)

    def align(self, ref: Tokens, hyp: Tokens) -> Alignment:
        key = (ref, hyp)
        hit = self._align.get(key)
        if hit is None:
            ops = self._pending.pop(key, None) if self._pending else None
            if ops is None:
                self._fresh.append(("ops", key))
                hit = self._align[key] = align(ref, hyp)
            else:
                hit = self._align[key] = alignment_from_opcodes(ref, hyp, ops)
        return hit

    def seed(
        self,
        opcodes: Mapping[PairKey, Sequence[Opcode]] = MappingProxyType({}),
        errors: Mapping[PairKey, int] = MappingProxyType({}),
        merged: Mapping[PairKey, int] = MappingProxyType({}),
    ) -> None:
        """Results computed earlier for these token pairs (e.g. by another process, read back from
        :mod:`asr_audit.text.persist`): :meth:`align`, :meth:`errors` answer them without
        recomputing. Pairs should be built from :meth:`tokens` so look-ups hit by identity. An
        alignment is built from its opcodes only when first asked for."""
        if self._align:
            for key, ops in opcodes.items():
                if key not in self._align:
                    self._pending[key] = tuple(ops)
        else:  # nothing aligned yet (a warm chunk's cache): no pair to skip
            self._pending.update(zip(opcodes.keys(), map(tuple, opcodes.values())))
        for key, n in errors.items():
            self._errors.setdefault(key, n)
        for key, n in merged.items():
            self._merged.setdefault(key, n)

    def pair_opcodes(self, ref: Tokens, hyp: Tokens) -> tuple[Opcode, ...]:
        """The pair's opcodes: seeded ones as they are (no :class:`Alignment` is built for them),
        else :meth:`align`'s."""
        key = (ref, hyp)
        ops = self._pending.get(key)  # first: a warm run's pairs are all seeded
        if ops is not None:
            return ops
        a = self._align.get(key)
        return a.opcodes if a is not None else self.align(ref, hyp).opcodes

    def peek_opcodes(self, ref: Tokens, hyp: Tokens) -> tuple[Opcode, ...] | None:
        """The pair's opcodes if this cache holds them (computed or seeded); computes nothing."""
        key = (ref, hyp)
        a = self._align.get(key)
        return a.opcodes if a is not None else self._pending.get(key)

    def peek_errors(self, ref: Tokens, hyp: Tokens, merge_compounds: bool = False) -> int | None:
        """The pair's edit distance (:meth:`errors`) if this cache holds it; computes nothing."""
        key = (ref, hyp)
        if merge_compounds:
            return self._merged.get(key)
        hit = self._errors.get(key)
        if hit is None and (counts := self._wer.get(key)) is not None:
            return counts.errors
        return hit

    def known(self) -> Iterator[tuple[str, PairKey, object]]:
        """Every result this cache holds (computed or seeded), without copying it: ``("ops", pair,
        opcodes)``, ``("errors", pair, edit distance)``, ``("merged", pair, edit distance with
        merged compounds)`` — what :mod:`asr_audit.text.persist` writes back."""
        for key, a in self._align.items():
            yield "ops", key, a.opcodes
        for key, ops in self._pending.items():
            yield "ops", key, ops
        for key, n in self._errors.items():
            yield "errors", key, n
        for key, counts in self._wer.items():
            if key not in self._errors:
                yield "errors", key, counts.errors
        for key, n in self._merged.items():
            yield "merged", key, n

    @property
    def computed(self) -> int:
        """How many results were computed here rather than seeded (a persistent cache writes only then)."""
        return len(self._fresh)

    def fresh(self, start: int = 0) -> Iterator[tuple[str, PairKey, object]]:
        """The results computed here (not seeded), from the ``start``-th on, as :meth:`known` yields them."""
        for name, key in self._fresh[start:]:
            if name == "ops":
                yield name, key, self._align[key].opcodes
            elif name == "merged":
                yield name, key, self._merged[key]
            else:
                counts = self._wer.get(key)
                yield name, key, self._errors[key] if key in self._errors else counts.errors if counts else 0

    def wer(self, ref: Tokens, hyp: Tokens) -> EditCounts:
        key = (ref, hyp)
        hit = self._wer.get(key)
        if hit is None:
            self._fresh.append(("errors", key))
            hit = self._wer[key] = wer_counts(ref, hyp)
        return hit

    def errors(self, ref: Tokens, hyp: Tokens, merge_compounds: bool = False) -> int:
        """The total edit distance (``wer(ref, hyp).errors``), via :func:`edit_distance`.

        ``merge_compounds=True``: the total of ``wer_counts(ref, hyp, merge_compounds=True)``
        (the Open ASR Leaderboard's scoring), memoized separately.
        """
        key = (ref, hyp)
        if merge_compounds:
            merged = self._merged.get(key)
            if merged is None:
                self._fresh.append(("merged", key))
                merged = self._merged[key] = wer_counts(ref, hyp, merge_compounds=True).errors
            return merged
        hit = self._errors.get(key)
        if hit is None:
            self._fresh.append(("errors", key))
            counts = self._wer.get(key)
            hit = self._errors[key] = (
                counts.errors if counts is not None else _distance(ref, hyp, self._keys, _levenshtein())
            )
        return hit

    def __len__(self) -> int:
        return len(self._align)


def tokens(text: str) -> Tokens:
    """Whitespace tokens of normalized text."""
    return tuple(text.split())


def corpus_wer(pairs: Iterable[tuple[Sequence[str], Sequence[str]]], merge_compounds: bool = False) -> float:
    """Corpus WER (total errors / total reference words) over (ref, hyp) token pairs."""
    errors = words = 0
    for ref, hyp in pairs:
        c = wer_counts(ref, hyp, merge_compounds)
        errors += c.errors
        words += c.ref_len
    return errors / words if words else 0.0
