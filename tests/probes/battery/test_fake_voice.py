"""The battery on a TEST DOUBLE: a fake backend that recites the reference only for audio
synthesized by one voice (flite-kal16) — and keeps reciting when a benchmark donor is appended —
but transcribes what was said otherwise. The grid must show the drop under another voice and
under a conversational donor, and the difference-in-differences must pick up the donor effect."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.audio.io import audio_hash
from asr_audit.corpus.clips import Corpus
from asr_audit.models.base import BaseBackend, DecodeOptions

VOICE_X, VOICE_Y = "flite-kal16", "flite-slt"


def _have_flite() -> bool:
    from asr_audit.audio.voices import available_voices

    return {VOICE_X, VOICE_Y} <= set(available_voices())


# per test: only the tests that synthesize with flite skip without it (not the runner's registry)
needs_flite = pytest.mark.skipif(not _have_flite(), reason="flite voices not installed (apt-get install flite)")


class VoiceKeyedFake(BaseBackend):
    """TEST DOUBLE. Knows clips by audio hash: ``recite`` (voice X) -> reference, ``listen`` -> spoken text.
    Audio that *starts* with a known clip (a donor splice) is answered from that clip plus "and so on";
    a voice-X clip followed by benchmark audio (a voice-X clip, any level) is still recited."""

    max_duration = None

    def __init__(self, recite: dict, listen: dict) -> None:
        super().__init__("fake-voice-x", DecodeOptions(), "fake")
        self.recite, self.listen = recite, listen  # hash -> (samples, text)
        self.listen_text: dict[str, str] = {}  # a recited clip's hash -> what voice Y says (the fixture sets it)

    @staticmethod
    def _lstrip(x: np.ndarray) -> np.ndarray:
        return x[np.flatnonzero(np.abs(x) > 1e-4)[0] :] if np.any(np.abs(x) > 1e-4) else x

    def _is_bench(self, tail: np.ndarray) -> bool:
        tail = self._lstrip(tail)
        for x, _ in self.recite.values():
            x = self._lstrip(x)
            m = min(len(x), len(tail), 8000)
            if m > 1000:
                a, b = x[:m].astype(np.float64), tail[:m].astype(np.float64)
                if abs(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12) > 0.999:
                    return True
        return False

    def _one(self, audio: np.ndarray) -> str:
        h = audio_hash(audio)
        if h in self.recite:
            return self.recite[h][1]
        if h in self.listen:
            return self.listen[h][1]
        for table, recites in ((self.recite, True), (self.listen, False)):
            for x, text in table.values():
                if len(audio) > len(x) and audio_hash(audio[: len(x)]) == audio_hash(x):
                    if recites and self._is_bench(audio[len(x) :]):
                        return text + " and so on"
                    spoken = self.listen_text.get(audio_hash(x), text)
                    return spoken + " and so on"
        return "and so on"

    def transcribe(self, audios):
        return [self._one(np.asarray(a, dtype=np.float32)) for a in audios]


@pytest.fixture(scope="module")
def setup():
    from asr_audit.audio.voices import synthesize
    from asr_audit.probes.battery.courtesy import DEMO_SENTENCES, courtesy_clips

    clips, spoken = courtesy_clips(DEMO_SENTENCES[:4], VOICE_X)
    recite, listen, listen_text = {}, {}, {}
    for c in clips:
        x = c.source.samples
        recite[audio_hash(x)] = (x, c.reference)
        listen_text[audio_hash(x)] = spoken[c.id]
        y, _ = synthesize(VOICE_Y, spoken[c.id])
        listen[audio_hash(y)] = (y, spoken[c.id])
    fake = VoiceKeyedFake(recite, listen)
    fake.listen_text = listen_text
    tone = (0.1 * np.sin(2 * np.pi * 200 * np.arange(16000 * 3) / 16000)).astype(np.float32)
    from asr_audit.audio.assets import AudioAsset

    return (
        Corpus("courtesy", "test", "tts", tuple(clips)),
        spoken,
        fake,
        AudioAsset.from_samples(tone, 16000, "conv-tone"),
    )


@needs_flite
@pytest.mark.parametrize("probe", ["courtesy", "refdis"])
def test_fake_voice_drops_under_other_voice_and_conversational_donor(setup, tmp_path, probe: str) -> None:
    from asr_audit.probes.battery.battery import BatteryOptions, run_battery
    from asr_audit.probes.battery.conditions import parse_conditions
    from asr_audit.runner.run import local_pool
    from asr_audit.store.sqlite import open_store

    corpus, spoken, fake, tone = setup
    conds = [
        "donor:bench8s",
        "donor:conv8s",
        f"voice:{VOICE_Y}",
        f"voice:{VOICE_Y}+donor:bench8s",
        f"voice:{VOICE_Y}+donor:conv8s",
    ]
    store = open_store(tmp_path / "s.sqlite")
    try:
        options = BatteryOptions(
            measure=probe, conditions=parse_conditions(conds), models=("fake",), resamples=200, study=False
        )
        res = run_battery(local_pool(loaded={"fake": fake}), corpus, store, options, spoken=spoken, conv_donors=[tone])
    finally:
        store.close()
    rate = {c.condition: c.accept_ref for c in res.cells}
    assert {c.n for c in res.cells} == {4}
    assert rate["original"] == 1.0
    assert rate["donor:bench8s"] == 1.0
    assert rate["donor:conv8s"] == 0.0
    assert rate[f"voice:{VOICE_Y}"] == 0.0
    diff = {d["condition"]: d for d in res.differences}
    assert diff["donor:conv8s"]["estimate"] == -1.0 and diff["donor:bench8s"]["estimate"] == 0.0
    (did,) = res.did
    assert did["voice"] == VOICE_Y and did["estimate"] == 1.0
    out = res.to_dict()
    assert set(out) >= {"conditions", "models", "cells", "differences", "did"}
    assert all({"accept_ref", "n", "ci_low", "ci_high"} <= set(c) for c in out["cells"])

    from asr_audit.report.section import ReportContext
    from asr_audit.report.sections_battery import battery_section

    sec = battery_section(ReportContext(tmp_path / "rep", {}), {"probe": "battery", "corpus": "c<x>", "result": out})
    assert "Difference in differences" in sec.html and "c&lt;x&gt;" in sec.html and "<x>" not in sec.html
    assert "battery-c-x-did.csv" in sec.tables


def test_runner_registers_battery_and_courtesy() -> None:
    from asr_audit.probes.core.probe import get_probe
    from asr_audit.runner import probes

    assert "asr_audit.probes.battery.probe" in probes.PROBE_MODULES
    names = probes.available_probes()
    assert {"battery", "courtesy"} <= set(names)
    assert get_probe("battery").name == "battery" and get_probe("courtesy").name == "courtesy"
    assert "conditions" in get_probe("battery").params and "measure" not in get_probe("courtesy").params
