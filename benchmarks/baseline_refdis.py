"""A straightforward re-implementation of the public reference-disagreement code (the baseline).

Written from ``refdis-algorithm.md`` (the paper's public ``refdis``/``align`` code restated),
independently of ``asr_audit.probes``: it serves both as the speed baseline of
``benchmarks/refdis_throughput.py`` and as an independent oracle for ``asr-audit refdis
--preset anchor --no-loo``. It follows the public code's shape on purpose, without caching:

* every string is normalized where it is used (the reference once more for every model),
  with ``whisper_normalizer``'s ``EnglishTextNormalizer`` and ``text_to_num.alpha2digit``;
* every (reference, hypothesis) pair is aligned with ``difflib.SequenceMatcher`` once per
  question asked of it: matched words, missed indices, substitutions at a span, insertions.

The only addition over the public code is the clip id on each edit, so that the benchmark can
compare edits one to one.

Run on its own::

    python benchmarks/baseline_refdis.py PRED_DIR --panel m1,m2,m3,m4
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

_OAL_NAME = re.compile(r"^MODEL_(.+?)_DATASET_")


class TextNormalizer:
    """Whisper's English normalizer, then spelled numbers as digits (as the public code does)."""

    def __init__(self, text2num: bool = True) -> None:
        from whisper_normalizer.english import EnglishTextNormalizer

        self.whisper = EnglishTextNormalizer()
        self.alpha2digit = None
        if text2num:
            from text_to_num import alpha2digit

            self.alpha2digit = alpha2digit

    def __call__(self, text: str) -> str:
        out = self.whisper(text)
        if self.alpha2digit is not None and out:
            out = self.alpha2digit(out, "en")
        return out


# --- alignment primitives: each call aligns afresh, as the public code does --------------------


def opcodes(ref_tokens: list[str], hyp: str) -> list[tuple[str, int, int, int, int]]:
    return list(difflib.SequenceMatcher(None, ref_tokens, hyp.split(), autojunk=False).get_opcodes())


def missed(ref_tokens: list[str], hyp: str) -> set[int]:
    out: set[int] = set()
    for tag, i1, i2, _, _ in opcodes(ref_tokens, hyp):
        if tag in ("delete", "replace"):
            out.update(range(i1, i2))
    return out


def matched(ref_tokens: list[str], hyp: str) -> int:
    return sum(i2 - i1 for tag, i1, i2, _, _ in opcodes(ref_tokens, hyp) if tag == "equal")


def substitution_at(ref_tokens: list[str], hyp: str, span: range) -> str:
    hyp_tokens = hyp.split()
    parts = []
    for tag, i1, i2, j1, j2 in opcodes(ref_tokens, hyp):
        if tag == "replace" and i1 < span.stop and span.start < i2:
            parts.append(" ".join(hyp_tokens[j1:j2]))
    return " ".join(parts)


def insertions(ref_tokens: list[str], hyp: str) -> dict[int, list[str]]:
    hyp_tokens = hyp.split()
    out: dict[int, list[str]] = {}
    for tag, i1, _, j1, j2 in opcodes(ref_tokens, hyp):
        if tag == "insert":
            out.setdefault(i1, []).extend(hyp_tokens[j1:j2])
    return out


def cer(a: str, b: str) -> float:
    a, b = re.sub(r"\s+", "", a), re.sub(r"\s+", "", b)
    if not a and not b:
        return 0.0
    if not a:
        return 1.0
    blocks = difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
    return 1.0 - sum(size for _, _, size in blocks) / len(a)


# --- mining ---------------------------------------------------------------------------------


def _emits(lst: list[str], chunk: list[str], at_start: bool) -> bool:
    k = len(chunk)
    if len(lst) < k:
        return False
    return (lst[len(lst) - k :] if at_start else lst[:k]) == chunk


def _consensus_chunk(lists: list[list[str]], at_start: bool, threshold: int) -> list[str]:
    chunk: list[str] = []
    k = 0
    while True:
        column = []
        for lst in lists:
            if len(lst) > k:
                column.append(lst[-1 - k] if at_start else lst[k])
        if not column:
            break
        counts = Counter(column)
        top = max(counts.values())
        token = next(t for t in column if counts[t] == top)
        if top < threshold:
            break
        chunk.append(token)
        k += 1
    return chunk[::-1] if at_start else chunk


def mine_clip(
    clip_id: str,
    ref: str,
    hyps: dict[str, str | None],
    panel: list[str],
    models: list[str],
    norm: TextNormalizer,
    majority: float = 0.8,
    min_run_len: int = 1,
    include_middle: bool = False,
    min_ref_match: float = 0.5,
    min_consensus_cer: float = 0.30,
    min_panel: int = 3,
) -> list[dict]:
    """One clip's edits and every model's verdicts, re-normalizing and re-aligning as it goes."""
    # Normalize per model, the reference again each time (as the public code's per-model loop).
    normed: dict[str, str] = {}
    ref_tokens: list[str] = []
    for m in models:
        ref_tokens = norm(ref).split()
        hyp = hyps.get(m)
        if hyp is not None:
            normed[m] = norm(hyp)
    if not models:
        ref_tokens = norm(ref).split()
    n = len(ref_tokens)
    if n == 0:
        return []
    present = [m for m in panel if m in normed]
    if len(present) < min_panel:
        return []
    min_matched = int(min_ref_match * n)
    eligible = {m for m in normed if matched(ref_tokens, normed[m]) >= min_matched}
    members = [m for m in present if m in eligible]
    if len(members) < min_panel:
        return []
    n_panel = len(members)
    threshold = max(2, math.ceil(majority * n_panel - 1e-9))
    edits: list[dict] = []

    missed_by = {m: missed(ref_tokens, normed[m]) for m in members}
    votes = [sum(i in missed_by[m] for m in members) for i in range(n)]
    runs, i = [], 0
    while i < n:
        if votes[i] >= threshold:
            j = i
            while j < n and votes[j] >= threshold:
                j += 1
            if j - i >= min_run_len:
                runs.append(range(i, j))
            i = j
        else:
            i += 1
    for span in runs:
        if not include_middle and span.start != 0 and span.stop - 1 != n - 1:
            continue
        text = " ".join(ref_tokens[span.start : span.stop])
        agreeing = [m for m in members if any(k in missed_by[m] for k in span)]
        cers = sorted(cer(text, substitution_at(ref_tokens, normed[m], span)) for m in agreeing)
        median = cers[len(cers) // 2] if cers else 1.0
        if median < min_consensus_cer:
            continue
        verdicts: dict[str, str | None] = {}
        for m in models:
            if m not in eligible:
                verdicts[m] = None
            else:
                verdicts[m] = "consensus" if any(k in missed(ref_tokens, normed[m]) for k in span) else "ref"
        position = "start" if span.start == 0 else "end" if span.stop - 1 == n - 1 else "middle"
        edits.append(
            {
                "clip_id": clip_id,
                "kind": "delete",
                "position": position,
                "ref_tokens": ref_tokens[span.start : span.stop],
                "ref_indices": list(span),
                "n_panel_agree": votes[span.start],
                "n_panel": n_panel,
                "consensus_cer": round(median, 3),
                "verdicts": verdicts,
            }
        )

    for anchor in (0, n):
        at_start = anchor == 0
        lists = [insertions(ref_tokens, normed[m]).get(anchor, []) for m in members]
        chunk = _consensus_chunk(lists, at_start, threshold)
        if len(chunk) < min_run_len:
            continue
        n_agree = sum(_emits(lst, chunk, at_start) for lst in lists)
        if n_agree < threshold:
            continue
        verdicts = {}
        for m in models:
            if m not in eligible:
                verdicts[m] = None
            else:
                own = insertions(ref_tokens, normed[m]).get(anchor, [])
                verdicts[m] = "consensus" if _emits(own, chunk, at_start) else "ref"
        edits.append(
            {
                "clip_id": clip_id,
                "kind": "insert",
                "position": "start" if at_start else "end",
                "ref_tokens": chunk,
                "ref_indices": [anchor],
                "n_panel_agree": n_agree,
                "n_panel": n_panel,
                "consensus_cer": None,
                "verdicts": verdicts,
            }
        )
    return edits


# --- driver ---------------------------------------------------------------------------------


def read_predictions(folder: str | Path) -> tuple[dict[str, str], dict[str, dict[str, str | None]]]:
    """Clip id -> reference (sorted by id), and model -> clip id -> hypothesis, from JSONL files."""
    refs: dict[str, str] = {}
    hyps: dict[str, dict[str, str | None]] = {}
    for path in sorted(Path(folder).glob("*.jsonl")):
        m = _OAL_NAME.match(path.name)
        model = m.group(1) if m else path.stem
        rows = hyps.setdefault(model, {})
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    refs.setdefault(row["audio_filepath"], row["text"].strip())
                    rows[row["audio_filepath"]] = row.get("pred_text")
    return dict(sorted(refs.items())), hyps


def accept_ref(edits: list[dict], models: list[str]) -> dict[str, tuple[int, int]]:
    """Per model: (verdicts "ref", verdicts not None) over all edits."""
    out = {}
    for m in models:
        judged = [e["verdicts"][m] for e in edits if e["verdicts"][m] is not None]
        out[m] = (sum(v == "ref" for v in judged), len(judged))
    return out


def run_baseline(
    folder: str | Path, panel: list[str], text2num: bool = True, **params: Any
) -> tuple[list[dict], dict[str, tuple[int, int]]]:
    """Every clip's edits and each model's accept-ref counts for the prediction files in ``folder``."""
    refs, hyps = read_predictions(folder)
    models = list(hyps)
    norm = TextNormalizer(text2num)
    edits: list[dict] = []
    for clip_id, ref in refs.items():
        clip_hyps = {m: hyps[m].get(clip_id) for m in models}
        edits.extend(mine_clip(clip_id, ref, clip_hyps, panel, models, norm, **params))
    return edits, accept_ref(edits, models)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--panel", required=True, help="comma-separated panel models")
    args = ap.parse_args(argv)
    edits, rates = run_baseline(args.folder, args.panel.split(","))
    print(f"{len(edits)} edits")
    for m, (k, n) in rates.items():
        print(f"{m:30s} accept-ref {k / n if n else 0:.3f} ({k}/{n})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
