"""The masked and lift probe objects (as a spec calls them) and their report sections."""

from __future__ import annotations

import pytest

import asr_audit.report.sections_audio  # noqa: F401 - registers the report sections
from asr_audit.errors import BackendError, ConfigError
from asr_audit.options import Surface
from asr_audit.probes.audio.probes import audio_inputs
from asr_audit.probes.core.models import LocalPool
from asr_audit.probes.core.probe import ProbeInputs, get_probe


def _inputs(corpus, store, backends):
    return audio_inputs(corpus, LocalPool.of(backends), store)


def _spec(name):
    return Surface.toml("spec.toml", f"probes.{name}")


def test_masked_probe_and_report(number_corpus, store, copier, tmp_path) -> None:
    from asr_audit.report.html import build_report
    from asr_audit.report.tables import to_json

    evil = type(copier)([(s, "<script>alert(1)</script> " + r) for s, r in copier.seen], spec="test-double:evil")
    inputs = _inputs(number_corpus, store, {"copier": copier, "evil": evil})
    result = get_probe("masked")(inputs, {"kind": "number", "gate_max_wer": 0.5}, _spec("masked"))
    assert result is not None
    assert [m["model"] for m in result["models"]] == ["copier", "evil"]
    assert result["models"][0]["accept_ref"] == 1.0 and result["models"][0]["n"] == 5
    assert result["models"][1]["accept_ref"] == 1.0  # the normalizer drops the <tag>; the report must escape it
    to_json(result)  # standard JSON (no NaN)
    lift = get_probe("lift")(inputs, {"spans": "full"}, _spec("lift"))
    assert lift is not None
    assert lift["models"] == [] and {s["model"] for s in lift["skipped"]} == {"copier", "evil"}
    html = build_report(
        {
            "title": "t",
            "probes": [
                {"probe": "masked", "corpus": "numbers", "result": result},
                {"probe": "lift", "corpus": "numbers", "result": lift},
            ],
        },
        tmp_path,
    ).read_text()
    assert "Masked-number recovery" in html and "Audio lift" in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert (tmp_path / "tables" / "masked-numbers.csv").read_text().startswith("model,accept_ref")


def test_probe_parameters_are_checked(number_corpus, store, copier) -> None:
    inputs = _inputs(number_corpus, store, {"copier": copier})
    with pytest.raises(
        ConfigError, match=r'\[probes\.masked\] models = \["nope"\] names nope, not models of this spec'
    ):
        get_probe("masked")(inputs, {"models": ["nope"]}, _spec("masked"))
    with pytest.raises(ConfigError, match="valid: silence, noise, cut"):
        get_probe("masked")(inputs, {"method": "blur"}, _spec("masked"))
    # a model named in `models` that cannot score is refused; taken by default it is skipped (above)
    with pytest.raises(BackendError, match="cannot score"):
        get_probe("lift")(inputs, {"spans": "full", "models": ["copier"]}, _spec("lift"))
    # a prediction-file corpus has no audio: masking does not apply there (the runner skips it)
    preds = ProbeInputs(corpus="p", predictions=inputs.predictions)
    assert get_probe("masked")(preds, {}, _spec("masked")) is None
    with pytest.raises(ConfigError, match="has prediction files only"):
        get_probe("lift")(preds, {"spans": "full"}, _spec("lift"))


def _remote(backends, sent, tmp_path):
    """An executor's transcription (as the Ray executor's ``transcribe``): what it is sent travels
    pickled, and is transcribed by ``backends`` through a store of its own."""
    import pickle

    from asr_audit.corpus.clips import Corpus
    from asr_audit.probes.core.models import Transcribed
    from asr_audit.store.sqlite import Store
    from asr_audit.store.transcribe import transcribe_corpus

    def remote(jobs, store):
        own = Store(tmp_path / f"remote-{len(sent)}.sqlite3")
        try:
            answers = {}
            for name, clips in jobs.items():
                clips = pickle.loads(pickle.dumps(tuple(clips), protocol=5))
                sent.append(clips)
                outcome = transcribe_corpus(backends[name], Corpus("battery", "test", "battery", clips), own)
                answers[name] = Transcribed(outcome)
            return answers
        finally:
            own.close()

    return remote


class _TravellingPool(LocalPool):
    """A pool whose models run "elsewhere": the clips it transcribes are made portable as the Ray executor
    makes them (:func:`asr_audit.runner.ray_exec._travel`: derived audio as recipes), travel pickled,
    and are transcribed by ``backends`` through a store of its own."""

    def __init__(self, backends, sent, tmp_path):
        super().__init__(self._refuse, tuple(backends))
        self.backends, self.sent, self.tmp_path = backends, sent, tmp_path

    @staticmethod
    def _refuse(name):
        raise AssertionError(f"model {name} loaded on the driver")

    def transcribe(self, jobs, store):
        from asr_audit.runner.ray_exec import _travel

        travelled = {k: [_travel(c) for c in clips] for k, clips in jobs.items()}
        return _remote(self.backends, self.sent, self.tmp_path)(travelled, store)


def test_masked_probe_through_a_pool_elsewhere_sends_recipes_and_matches_local(
    number_corpus, store, copier, aligner, tmp_path
) -> None:
    """The masked clips travel as recipes (the clip and its span, with the noise fill's seed), build the
    driver's masked audio bit for bit, and the result is the local one; no model loads on the driver."""
    from asr_audit.audio.io import load_clip_audio
    from asr_audit.probes.audio.masked import MaskParams, plan_masks
    from asr_audit.probes.battery.recipe import RecipeSource

    params = {"method": "noise", "gate_max_wer": 0.5}
    local = get_probe("masked")(_inputs(number_corpus, store, {"copier": copier}), params, _spec("masked"))
    sent: list = []
    pool = _TravellingPool({"copier": copier}, sent, tmp_path)
    got = get_probe("masked")(audio_inputs(number_corpus, pool, store), params, _spec("masked"))
    assert got == local and len(sent) == 2  # the unmasked clips, then the masked ones
    plan = plan_masks(number_corpus, store, MaskParams(method="noise"), aligner=aligner)
    recipes = [c for c in sent[1] if isinstance(c.source, RecipeSource)]
    assert len(recipes) == len(plan.recipes) == len(sent[1]) == 5 and len(sent[0]) == 5
    assert not any(isinstance(c.source, RecipeSource) for c in sent[0])  # the clips as they are
    assert all(r.source.nbytes() < 4000 for r in recipes)
    assert {load_clip_audio(c).audio_hash for c in recipes} == {r.provenance.output_hash for r in plan.recipes}
