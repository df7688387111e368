"""Audio verification's precision and recall on calibration sets with planted truth (issue 26).

For every seed: a calibration set built as ``benchmarks/miner_precision.py`` builds its own but
read by one voice (``calib build --n-sentences 40 --voices slt``: 40 clips, half the cost), transcribed by the bundled panel whisper-tiny.en,
whisper-base, PocketSphinx en-us; built and transcribed when missing, through the result store),
mined with ``--preset paper`` (full panel, no leave-one-out, no confidence threshold: every edit,
the false positives included), each edit labelled by planted truth (``calib.score.edit_label``:
reference-wrong on a planted error, reference-right where the panel misheard, unsure on a record
convention) and scored on its audio by the verifiers (``probes/audio/verify_edits.py``: mean
log-probability per token of the reference and of the single-edit text; the scores are cached in
the set's folder, ``verify-scores.json``). At each margin of :data:`GRID`:

* precision = true reference errors among the edits the verifiers call reference-wrong (what
  ``Verification.precision`` carries; convention edits count as not errors);
* recall = planted-error edits called reference-wrong / planted-error edits;
* the reference-right calls' precision (panel mishearings among them), and the unsure share.

Verifier configurations: whisper-tiny.en-pt and whisper-base-pt together (both must clear the
margin), and each alone. Both are the panel's own models rebuilt in PyTorch: on these sets each
verifier verifies edits it helped mine.

Margin rule (fixed before any seed was scored): on the tuning seeds, the smallest margin of
:data:`GRID` whose pooled precision of reference-wrong calls is >= 0.95 for the two verifiers
together; if none reaches it, the margin of highest precision. It is frozen in
``asr_audit.probes.audio.verify_edits.MARGIN`` before the evaluation seeds are run.

    python benchmarks/audio_verify.py --seeds 101 --tune                     # tuning seed
    python benchmarks/audio_verify.py --seeds 201,202,203 --out benchmarks/results/audio-verify.json

Seeds: tuning 101; evaluation 201, 202, 203 (fixed before any verifier scored any seed).

Runtime on 2 busy cores (load 12): 30-60 min per new seed for the panel's transcription, then
5-15 min for the two verifiers' scoring; seconds once both are cached.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from miner_precision import ensure_seed  # noqa: E402  (a sibling benchmark script, not a package)

from asr_audit.calib.score import edit_label  # noqa: E402
from asr_audit.calib.truth import load_truth  # noqa: E402
from asr_audit.corpus.predfiles import load_predictions  # noqa: E402
from asr_audit.probes.audio.verify_edits import (  # noqa: E402
    MARGIN,
    EditScore,
    audio_loader,
    decide,
    score_edits,
    unique_edits,
)
from asr_audit.probes.predfiles.refdis import preset_params  # noqa: E402
from asr_audit.probes.predfiles.refdis_run import run_refdis  # noqa: E402
from asr_audit.probes.predfiles.verified import REFERENCE_RIGHT, REFERENCE_WRONG, UNSURE, edit_key  # noqa: E402
from asr_audit.stats.intervals import wilson  # noqa: E402

PANEL = ("whisper-tiny.en", "whisper-base", "sphinx-en-us")
VERIFIERS = ("whisper-tiny.en-pt", "whisper-base-pt")
CONFIGS: tuple[tuple[str, ...], ...] = (VERIFIERS, (VERIFIERS[0],), (VERIFIERS[1],))
GRID = (0.0, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0)
TUNE_SEEDS = (101,)
EVAL_SEEDS = (201, 202, 203)
TARGET_PRECISION = 0.95
N_SENTENCES, VOICES = 40, "slt"


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def seed_edits(d: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The set's mined edits (paper, full panel) with their truth label, and input hashes."""
    truth = load_truth(d)
    pset = load_predictions(d / "preds", None)
    result = run_refdis(pset, PANEL, preset_params("paper", loo=False), models=PANEL, n_resamples=1)
    refs = {cid: tuple(t.split()) for cid, t in result.references.items()}
    rows = [{"key": edit_key(e), "truth": edit_label(truth, e), "edit": e} for e in unique_edits(result)]
    hashes = {p.name: _sha(p) for p in sorted((d / "preds").glob("*.jsonl"))}
    hashes["truth.jsonl"] = _sha(d / "truth.jsonl")
    return [{**r, "refs": refs} for r in rows], hashes


def scores_for(d: Path, rows: Sequence[Mapping[str, Any]], verifier: str) -> dict[str, dict[str, Any]]:
    """``edit key -> EditScore dict`` by ``verifier``, cached in ``d/verify-scores.json``."""
    cache_path = d / "verify-scores.json"
    cache: dict[str, dict[str, dict[str, Any]]] = (
        json.loads(cache_path.read_text()) if cache_path.is_file() else {}
    )
    have = cache.get(verifier, {})
    todo = [r for r in rows if r["key"] not in have]
    if todo:
        from asr_audit.models.base import load_backend

        say(f"{d.name}: scoring {len(todo)} edits with {verifier}")
        refs = todo[0]["refs"]
        load = audio_loader(str(d), {})
        got = score_edits([r["edit"] for r in todo], refs, load_backend(verifier), load)
        have.update({k: v.to_dict() | {"mean_reference": v.mean_reference, "mean_corrected": v.mean_corrected} for k, v in got.items()})
        cache[verifier] = have
        cache_path.write_text(json.dumps(cache, indent=0, sort_keys=True) + "\n")
    return have


def _score(d: Mapping[str, Any]) -> EditScore:
    return EditScore(
        verifier=str(d["verifier"]),
        mean_reference=d.get("mean_reference"),
        mean_corrected=d.get("mean_corrected"),
        error=d.get("error"),
    )


def evaluate(
    rows: Sequence[Mapping[str, Any]], scores: Mapping[str, Mapping[str, Mapping[str, Any]]], config: Sequence[str], margin: float
) -> dict[str, Any]:
    """Counts and rates of one verifier configuration at one margin over ``rows``."""
    n = {(t, c): 0 for t in (REFERENCE_WRONG, REFERENCE_RIGHT, UNSURE) for c in (REFERENCE_WRONG, REFERENCE_RIGHT, UNSURE)}
    for r in rows:
        call = decide([_score(scores[v][r["key"]]) for v in config], margin)
        n[(r["truth"], call)] += 1
    called_wrong = sum(n[(t, REFERENCE_WRONG)] for t in (REFERENCE_WRONG, REFERENCE_RIGHT, UNSURE))
    called_right = sum(n[(t, REFERENCE_RIGHT)] for t in (REFERENCE_WRONG, REFERENCE_RIGHT, UNSURE))
    errors = sum(n[(REFERENCE_WRONG, c)] for c in (REFERENCE_WRONG, REFERENCE_RIGHT, UNSURE))
    misheard = sum(n[(REFERENCE_RIGHT, c)] for c in (REFERENCE_WRONG, REFERENCE_RIGHT, UNSURE))
    return {
        "verifiers": list(config),
        "margin": margin,
        "n_edits": len(rows),
        "n_error_edits": errors,
        "n_misheard_edits": misheard,
        "confusion": {f"{t}->{c}": v for (t, c), v in n.items()},
        "precision": wilson(n[(REFERENCE_WRONG, REFERENCE_WRONG)], called_wrong).to_dict(),
        "recall": wilson(n[(REFERENCE_WRONG, REFERENCE_WRONG)], errors).to_dict(),
        "right_precision": wilson(n[(REFERENCE_RIGHT, REFERENCE_RIGHT)], called_right).to_dict(),
        "right_recall": wilson(n[(REFERENCE_RIGHT, REFERENCE_RIGHT)], misheard).to_dict(),
    }


def choose_margin(table: Sequence[Mapping[str, Any]]) -> float:
    """The rule of the module docstring, on the two verifiers' rows of ``table``."""
    both = [r for r in table if tuple(r["verifiers"]) == VERIFIERS]
    ok = [r for r in both if r["precision"]["n"] and r["precision"]["rate"] >= TARGET_PRECISION]
    if ok:
        return min(float(r["margin"]) for r in ok)
    return float(max(both, key=lambda r: (r["precision"]["rate"], -r["margin"]))["margin"])


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "src", "benchmarks"], capture_output=True, text=True)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _fmt(r: Mapping[str, Any]) -> str:
    return f"{r['rate']:.3f} ({r['k']}/{r['n']}) [{r['low']:.2f}, {r['high']:.2f}]" if r["n"] else "— (0/0)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default=",".join(map(str, EVAL_SEEDS)))
    ap.add_argument("--work", type=Path, default=Path("/tmp/averify/slt"))
    ap.add_argument("--tune", action="store_true", help="print the margin the rule picks on these seeds")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    t0 = time.time()
    seeds = [int(s) for s in args.seeds.split(",")]
    rows: list[dict[str, Any]] = []
    scores: dict[str, dict[str, Any]] = {v: {} for v in VERIFIERS}
    inputs: dict[str, dict[str, str]] = {}
    per_seed: dict[int, list[dict[str, Any]]] = {}
    for s in seeds:
        d = ensure_seed(args.work, s, N_SENTENCES, VOICES)
        seed_rows, hashes = seed_edits(d)
        inputs[str(s)] = hashes
        for v in VERIFIERS:
            got = scores_for(d, seed_rows, v)
            scores[v].update({f"{s}:{k}": x for k, x in got.items()})
        seed_rows = [{**r, "key": f"{s}:{r['key']}"} for r in seed_rows]
        per_seed[s] = seed_rows
        rows.extend(seed_rows)
        say(f"seed {s}: {len(seed_rows)} edits")
    table = [evaluate(rows, scores, c, m) for c in CONFIGS for m in GRID]
    print("| verifiers | margin | precision (reference-wrong calls) | recall (planted-error edits) | reference-right calls: precision | recall |")
    print("|---|---|---|---|---|---|")
    for r in table:
        print(
            f"| {' + '.join(r['verifiers'])} | {r['margin']:g} | {_fmt(r['precision'])} | {_fmt(r['recall'])} "
            f"| {_fmt(r['right_precision'])} | {_fmt(r['right_recall'])} |"
        )
    at = [evaluate(rs, scores, VERIFIERS, MARGIN) for rs in per_seed.values()]
    for s, r in zip(per_seed, at):
        print(f"seed {s} at margin {MARGIN:g}: precision {_fmt(r['precision'])}, recall {_fmt(r['recall'])}")
    if args.tune:
        print(f"margin by the rule on seeds {seeds}: {choose_margin(table):g}")
    elapsed = time.time() - t0
    say(f"{elapsed:.0f} s")
    if args.out:
        frozen = evaluate(rows, scores, VERIFIERS, MARGIN)
        out = {
            "benchmark": "audio_verify",
            "commit": _commit(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": "python benchmarks/audio_verify.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "seeds": seeds,
            "tuning_seeds": list(TUNE_SEEDS),
            "panel": list(PANEL),
            "preset": "paper (no leave-one-out, no confidence threshold)",
            "calib": f"calib build --n-sentences {N_SENTENCES} --voices {VOICES} --seed S",
            "margin": MARGIN,
            "at_margin": frozen,
            "per_seed_at_margin": {str(s): r for s, r in zip(per_seed, at)},
            "grid": table,
            "input_sha256_16": inputs,
            "seconds": round(elapsed),
        }
        args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
