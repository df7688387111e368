"""Audio verification of a run's edits (``probes/audio/verify_edits.py``) with scoring test doubles,
and ``refdis --verify-with``'s refusals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from asr_audit.probes.predfiles.verified import AUDIO, REFERENCE_RIGHT, REFERENCE_WRONG, UNSURE, edit_key

# clip -> (reference, what was said, what the panel writes)
CLIPS = {
    "c0": ("Madam President, we agree on this", "we agree on this", "we agree on this"),
    "c1": ("we meet on monday", "we meet on monday", "we meet on sunday"),
    "c2": ("thank you we begin today", "we begin today", "we begin today"),
}
PANEL = ("p1", "p2", "p3", "p4")


def _write_preds(d: Path, tested_copies: bool = True) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for m in (*PANEL, "t"):
        rows = []
        for cid, (ref, _, panel) in CLIPS.items():
            hyp = ref.lower().replace(",", "") if (m == "t" and tested_copies) else panel
            rows.append(json.dumps({"audio_filepath": cid, "text": ref, "pred_text": hyp}))
        (d / f"{m}.jsonl").write_text("\n".join(rows) + "\n")
    return d


class _Scorer:
    """TEST DOUBLE — one log-prob per word: -0.1 for a word the "audio" holds, -3 for another."""

    capabilities = frozenset({"score"})
    max_duration = None

    def __init__(self, name: str, spoken: dict[str, str]) -> None:
        self.name, self.spoken = name, spoken

    @property
    def spec(self) -> str:
        return self.name

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        raise NotImplementedError("a scoring test double: it scores and never transcribes")

    def identity(self):
        from asr_audit.models.base import BackendIdentity, DecodeOptions

        return BackendIdentity(self.name, "0", DecodeOptions())

    def score(self, audios, prefixes, targets):
        from asr_audit.models.base import TokenScores

        said = set(self.spoken[str(int(audios[0][0]))].split())
        return [TokenScores(tuple(t.split()), tuple(-0.1 if w in said else -3.0 for w in t.split())) for t in targets]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis

    d = _write_preds(tmp_path_factory.mktemp("preds"))
    return run_refdis(load_predictions(d, None), PANEL, preset_params("paper", loo=False), n_resamples=50)


def _load(cid: str) -> np.ndarray:
    if cid == "c9":
        from asr_audit.errors import AuditError

        raise AuditError("c9.wav: cannot read; fix: re-encode")
    return np.full(1600, float(cid[1:]), dtype=np.float32)


def test_two_verifiers_label_each_edit(run) -> None:
    from asr_audit.probes.audio.verify_edits import verify_edits

    truth = {"0": "we agree on this", "1": "we meet on monday", "2": "we begin today"}
    other = {**truth, "2": "thank you we begin today"}  # the second verifier hears the opener on c2
    backends = {"a": _Scorer("a", truth), "b": _Scorer("b", other)}
    av = verify_edits(run, ["a", "b"], backends, _load, margin=0.05)
    by_clip = {k.split("|")[0]: lab.label for k, lab in av.verification.labels.items()}
    assert by_clip == {"c0": REFERENCE_WRONG, "c1": REFERENCE_RIGHT, "c2": UNSURE}
    v = av.verification
    assert v.source == AUDIO and v.excluded == ("a", "b")
    assert v.precision is not None and not v.precision.defined  # never measured: no precision
    assert any("never measured" in n for n in v.notes)
    c0 = next(k for k in av.scores if k.startswith("c0"))
    details: dict[str, Any] = av.details()
    assert details["edits"][c0]["scores"][0]["diff"] == pytest.approx(0.9667)


def test_the_verified_rates_reach_the_result(run) -> None:
    from asr_audit.probes.audio.verify_edits import verify_edits, with_audio_verification

    truth = {"0": "we agree on this", "1": "we meet on monday", "2": "we begin today"}
    av = verify_edits(run, ["a"], {"a": _Scorer("a", truth)}, _load, panel_members=("p1",))
    data = with_audio_verification(run.to_dict(), av)
    t = next(m for m in data["models"] if m["model"] == "t")["verified"]
    # t copies the reference: it wrote it on both reference-wrong edits, and on the reference-right one
    assert (t["n_ref"], t["n_eligible"], t["hears_better_n"]) == (2, 2, 1)
    assert t["copy_low"] == 0.0  # an unmeasured source cannot support a claim
    assert data["verification"]["audio"]["margin"] == 0.0  # the calibrated margin
    assert any("panel member p1 is a verifier" in n for n in data["verification"]["notes"])
    assert {edit_key(e) for e in run.edits} == set(data["verification"]["audio"]["edits"])


def test_a_clip_that_cannot_be_scored_is_unsure() -> None:
    from asr_audit.probes.audio.verify_edits import score_edits
    from asr_audit.probes.predfiles.refdis import Edit

    e = Edit(clip_id="c9", kind="deletion", position="start", ref_indices=(0,), ref_tokens=("so",), alt_text="",
             n_panel_agree=3, n_panel=3, consensus_cer=1.0, miners=(), verdicts={}, renderings={})  # fmt: skip
    got = score_edits([e], {"c9": ("so", "we", "go")}, _Scorer("a", {}), _load)
    assert got[edit_key(e)].error == "c9.wav: cannot read; fix: re-encode" and got[edit_key(e)].diff is None


def test_measured_precision_applies_only_to_its_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    from asr_audit.probes.audio import verify_edits as V

    monkeypatch.setattr(V, "MEASURED", {(("a", "b"), 0.05): (9, 10)})
    p = V.measured_precision(["b", "a"], 0.05)
    assert p is not None and (p.k, p.n) == (9, 10)
    assert V.measured_precision(["a", "b"], 0.1) is None and V.measured_precision(["a"], 0.05) is None


def test_refdis_refuses_a_verifier_under_test(tmp_path: Path, run_cli) -> None:
    preds = _write_preds(tmp_path / "preds")
    base = ["refdis", "--preds", preds, "--panel", ",".join(PANEL), "--no-loo", "--preset", "paper"]
    for args, message in (
        (["--models", "t", "--verify-with", "t", "--audio-root", tmp_path], "--verify-with t is the model under test"),
        (["--verify-with", "t,t", "--audio-root", tmp_path], "names a verifier twice"),
        (["--verify-margin", "0.1"], "fix: add --verify-with or drop --verify-margin"),
        (["--verify-with", "a", "--audio-root", tmp_path / "no"], "--audio-root"),
    ):
        code, _, err = run_cli(*base, *args)
        assert code == 2 and message in err and "fix:" in err and "Traceback" not in err, (args, err)


def test_a_spec_names_the_verifiers() -> None:
    from asr_audit.options import Surface
    from asr_audit.probes.predfiles.refdis_options import RefdisOptions

    surface = Surface.toml("audit.toml", "probes.refdis")
    o = RefdisOptions.from_mapping({"verify_with": ["whisper-base-pt"], "audio_root": "audio/"}, surface)
    assert (o.verify_with, o.audio_root, o.verify_margin) == (("whisper-base-pt",), "audio/", None)
    o = RefdisOptions.from_mapping({"verify_with": "a, b", "verify_margin": 0.2}, surface)
    assert (o.verify_with, o.verify_margin) == (("a", "b"), 0.2)
    assert RefdisOptions.from_mapping({}, surface).verify_with == ()


def test_a_panel_member_verifier_carries_no_precision(run, monkeypatch: pytest.MonkeyPatch) -> None:
    from asr_audit.probes.audio import verify_edits as V

    monkeypatch.setattr(V, "MEASURED", {(("a",), V.MARGIN): (20, 20)})
    truth = {"0": "we agree on this", "1": "we meet on monday", "2": "we begin today"}
    outside = V.verify_edits(run, ["a"], {"a": _Scorer("a", truth)}, _load)
    assert outside.verification.precision is not None and outside.verification.precision.k == 20
    inside = V.verify_edits(run, ["a"], {"a": _Scorer("a", truth)}, _load, panel_members=("p1",))
    assert inside.verification.precision is not None and not inside.verification.precision.defined
    assert "not carried" in inside.verification.notes[0]


class _WavScorer(_Scorer):
    """TEST DOUBLE — :class:`_Scorer` for audio files whose samples hold (clip number + 1) / 10."""

    def score(self, audios, prefixes, targets):
        n = round(float(audios[0][0]) * 10) - 1
        return super().score([np.full(1, float(n), dtype=np.float32)] * len(audios), prefixes, targets)


SAID = {"0": "we agree on this", "1": "we meet on monday", "2": "we begin today"}


@pytest.fixture
def wav_set(tmp_path: Path):
    """Prediction files keyed ``c<i>.wav``, the wavs under ``audio/``, and the backend ``said-test``."""
    import soundfile as sf

    from asr_audit.models.base import BACKENDS, SCORE, register_backend

    preds, audio = tmp_path / "preds", tmp_path / "audio"
    audio.mkdir()
    preds.mkdir()
    for i in range(3):
        sf.write(audio / f"c{i}.wav", np.full(1600, (i + 1) / 10, dtype=np.float32), 16000, subtype="PCM_16")
    for m in (*PANEL, "t"):
        rows = []
        for cid, (ref, _, panel) in CLIPS.items():
            hyp = ref.lower().replace(",", "") if m == "t" else panel
            rows.append(json.dumps({"audio_filepath": f"{cid}.wav", "text": ref, "pred_text": hyp}))
        (preds / f"{m}.jsonl").write_text("\n".join(rows) + "\n")
    register_backend("said-test", description="test scorer", capabilities=[SCORE])(
        lambda arg, options: _WavScorer("said-test", SAID)
    )
    yield preds, audio
    BACKENDS.unregister("said-test")


def test_the_spec_probe_verifies_on_the_audio(wav_set) -> None:
    from probe_calls import spec_probe

    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.core.probe import ProbeInputs

    preds, audio = wav_set
    ctx = ProbeInputs(corpus="c", predictions=load_predictions(preds, None), panel=PANEL, seed=0, normalizer="whisper")
    params = {"preset": "paper", "loo": False, "verify_with": ["said-test:x"], "resamples": 20}
    data = spec_probe("refdis", ctx, {**params, "audio_root": str(audio)})
    assert data is not None
    t = next(m for m in data["models"] if m["model"] == "t")["verified"]
    assert (t["n_ref"], t["n_eligible"]) == (2, 2) and "wer_inflation" in t
    assert data["verification"]["source"] == AUDIO and "audio" in data["verification"]
    from asr_audit.errors import ConfigError

    with pytest.raises(ConfigError, match="audio_root"):
        spec_probe("refdis", ctx, params)  # a prediction-file corpus has no audio of its own


def test_refdis_verify_with_feeds_the_verified_scores(wav_set, tmp_path: Path, run_cli) -> None:
    preds, audio = wav_set
    out = tmp_path / "r.json"
    base = ["refdis", "--preds", preds, "--panel", ",".join(PANEL), "--no-loo", "--preset", "paper"]
    code, _, err = run_cli(*base, "--json", out, "--verify-with", "said-test:x", "--audio-root", audio)
    assert code == 0, err
    data = json.loads(out.read_text())
    t = next(m for m in data["models"] if m["model"] == "t")["verified"]
    assert (t["n_ref"], t["n_eligible"], t["hears_better_n"]) == (2, 2, 1)
    assert t["copy_low"] == 0.0 and "wer_inflation" in t  # unmeasured: no claim; the verified WER step ran
    assert data["verification"]["source"] == AUDIO and len(data["verification"]["audio"]["edits"]) == 3
    code, _, err = run_cli(*base, "--verify-with", "said-test:x", "--audio-root", audio, "--truth", tmp_path)
    assert code == 2 and "two verifications" in err and "fix:" in err
