"""A prediction set as mining input: references and hypotheses normalized once into token tuples.

A normalizer that raises on some text (e.g. Whisper's number normalizer on a number over
Python's 4,300-digit limit) is a one-line input error naming the file, row and field
(:func:`normalizer_failure`), not a traceback.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.errors import AuditError, InputFileError
from asr_audit.probes.predfiles.refdis import ClipInput
from asr_audit.text.align import AlignmentCache, Tokens, tokens


def prepare_clips(
    preds: PredictionSet,
    models: Sequence[str],
    normalize: Any,
    text2num: bool,
    *,
    references: Mapping[str, str] | None = None,
    cache: AlignmentCache | None = None,
    workers: int = 1,
    language: str = "en",
    known: dict[str, str] | None = None,
) -> list[ClipInput]:
    """Normalize references and hypotheses once (cached per distinct string) into token tuples.

    ``text2num`` writes spelled numbers as digits after ``normalize``. ``references`` replaces
    the prediction set's own (e.g. corrected references). With ``cache``, token tuples come from
    :meth:`AlignmentCache.tokens`, so a run that reuses the cache gets the very tuples its
    alignments are keyed by. ``language`` (a primary subtag) is the language ``text2num`` reads
    numbers in. ``known`` maps raw texts to their normalized form computed earlier with this
    very normalizer (the persistent text cache, :mod:`asr_audit.text.persist`): those are not
    normalized again, and every text normalized here is added to it.
    """
    from asr_audit.text.normalize import normalize_many
    from asr_audit.text.text2num import with_text2num

    refs = references if references is not None else preds.references
    raw: list[str] = list(refs.values())
    hyp_rows = []
    for m in models:
        get = preds.file(m).rows.get
        hyp_rows.append([None if (r := get(cid)) is None else r.hypothesis for cid in refs])
    distinct = list(dict.fromkeys([*raw, *(h for col in hyp_rows for h in col if h is not None)]))
    composed = with_text2num(normalize, language) if text2num else normalize
    todo = distinct if not known else [t for t in distinct if t not in known]
    try:
        fresh = normalize_many(composed, todo, workers=workers)
    except AuditError:
        raise
    except Exception as exc:  # noqa: BLE001 - a normalizer crash on some text: name its file and row
        raise normalizer_failure(preds, models, refs, composed, exc, given_refs=references is not None) from None
    if known is None:
        normed = fresh
    else:
        known.update(zip(todo, fresh))
        normed = [known[t] for t in distinct]
    to_tokens = tokens if cache is None else cache.tokens
    tok: dict[str | None, Tokens] = {k: to_tokens(v) for k, v in zip(distinct, normed)}
    tok_get = tok.get
    columns = [[tok_get(h) for h in col] for col in hyp_rows]  # None stays None
    clips = []
    for ci, (cid, ref) in enumerate(refs.items()):
        clips.append(ClipInput(cid, tok[ref], {m: col[ci] for m, col in zip(models, columns)}))
    return clips


_DIGIT_RUN = re.compile(r"\d+")


def normalizer_failure(
    preds: PredictionSet,
    models: Sequence[str],
    refs: Mapping[str, str],
    normalize: Any,
    exc: Exception,
    *,
    given_refs: bool,
) -> AuditError:
    """The one-line error for a normalizer that raised on some text: which file, row and field.

    Re-runs ``normalize`` on each row's texts (only on this error path) to find the first that
    fails. References come from the prediction files unless ``given_refs`` (a corrected
    reference file, whose rows are not tracked: the clip id is named instead).
    """

    def fails(text: str) -> Exception | None:
        try:
            normalize(text)
        except Exception as err:  # noqa: BLE001 - any crash of the normalizer is the user's text
            return err
        return None

    def error(where: object, line: int | None, what: str, text: str, err: Exception) -> AuditError:
        limit = getattr(sys, "get_int_max_str_digits", lambda: 0)() or float("inf")  # 3.10.7+
        longest = max((len(m) for m in _DIGIT_RUN.findall(text)), default=0)
        cause = (
            f"it contains a number of {longest} digits; Python converts at most {limit}"
            if longest > limit
            else f"{type(err).__name__}: {err}"
            if str(err)
            else type(err).__name__
        )
        return InputFileError(
            where,
            f"the {normalize.name} normalizer cannot normalize this {what} ({cause})",
            "shorten or remove that text (split very long digit strings), then rerun",
            line,
        )

    if given_refs:
        for cid, ref in refs.items():
            if (err := fails(ref)) is not None:
                return error("the corrected references", None, f"reference of clip {cid!r}", ref, err)
    for model in models:
        f = preds.file(model)
        for cid in refs:
            row = f.rows.get(cid)
            if row is None:
                continue
            texts = (
                [("hypothesis", row.hypothesis)]
                if given_refs
                else [("reference", row.reference), ("hypothesis", row.hypothesis)]
            )
            for what, text in texts:
                if text is not None and (err := fails(text)) is not None:
                    return error(f.path, row.line, f"{what} (clip {cid!r})", text, err)
    return AuditError(
        f"the {normalize.name} normalizer failed ({type(exc).__name__}: {exc}) on a text that "
        "could not be traced to a file row; fix: check the prediction files for unusual text"
    )
