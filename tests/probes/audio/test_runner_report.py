"""The runner registrations and report sections of masked and lift."""

from __future__ import annotations

from dataclasses import replace

import pytest

import asr_audit.report.sections_audio
import asr_audit.runner.probes_audio  # noqa: F401 - registers the probes (until listed in PROBE_MODULES)
from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.errors import ConfigError
from asr_audit.runner.probes import ProbeContext, get_probe


def _ctx(corpus, store, backends):
    return ProbeContext(
        corpus="numbers",
        predictions=None,
        panel=(),
        seed=0,
        normalizer="whisper",
        clips=corpus,
        backend=backends.__getitem__,
        models=tuple(backends),
        store=store,
    )


def test_masked_probe_and_report(number_corpus, store, copier, tmp_path) -> None:
    from asr_audit.report.html import build_report
    from asr_audit.report.tables import to_json

    evil = type(copier)([(s, "<script>alert(1)</script> " + r) for s, r in copier.seen], spec="test-double:evil")
    ctx = _ctx(number_corpus, store, {"copier": copier, "evil": evil})
    result = get_probe("masked").run(ctx, {"kind": "number", "gate_max_wer": 0.5})
    assert result is not None
    assert [m["model"] for m in result["models"]] == ["copier", "evil"]
    assert result["models"][0]["accept_ref"] == 1.0 and result["models"][0]["n"] == 5
    assert result["models"][1]["accept_ref"] == 1.0  # the normalizer drops the <tag>; the report must escape it
    to_json(result)  # standard JSON (no NaN)
    lift = get_probe("lift").run(ctx, {"spans": "full"})
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
    ctx = _ctx(number_corpus, store, {"copier": copier})
    with pytest.raises(ConfigError, match="not models of this spec"):
        get_probe("masked").run(ctx, {"models": ["nope"]})
    with pytest.raises(ConfigError, match="valid: silence, noise, cut"):
        get_probe("masked").run(ctx, {"method": "blur"})
    # a prediction-file corpus has no audio: masking does not apply there (the runner skips it)
    assert (
        get_probe("masked").run(
            ProbeContext(
                corpus="p", predictions=PredictionSet(files=(), references={}), panel=(), seed=0, normalizer="whisper"
            ),
            {},
        )
        is None
    )


def _remote(backends, sent, tmp_path):
    """An executor's transcriber (as the Ray executor's ``transcribe_clips``): what it is sent travels
    pickled, and is transcribed by ``backends`` through a store of its own."""
    import pickle

    from asr_audit.corpus.clips import Corpus
    from asr_audit.probes.battery.recipe import RemoteAnswer
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
                answers[name] = RemoteAnswer(outcome)
            return answers
        finally:
            own.close()

    return remote


def test_masked_probe_through_an_executor_transcriber_sends_recipes_and_matches_local(
    number_corpus, store, copier, aligner, tmp_path
) -> None:
    """The masked clips travel as recipes (the clip and its span, with the noise fill's seed), build the
    driver's masked audio bit for bit, and the result is the local one; no model loads on the driver."""
    from asr_audit.audio.io import load_clip_audio
    from asr_audit.probes.audio.masked import MaskParams, plan_masks
    from asr_audit.probes.battery.recipe import RecipeSource

    params = {"method": "noise", "gate_max_wer": 0.5}
    local = get_probe("masked").run(_ctx(number_corpus, store, {"copier": copier}), params)
    sent: list = []
    loads: list = []

    def backend(name):
        loads.append(name)
        return copier

    remote = _remote({"copier": copier}, sent, tmp_path)
    remote_ctx = replace(_ctx(number_corpus, store, {"copier": copier}), backend=backend, transcribe=remote)
    got = get_probe("masked").run(remote_ctx, params)
    assert got == local and loads == [] and len(sent) == 1
    plan = plan_masks(number_corpus, store, MaskParams(method="noise"), aligner=aligner)
    recipes = [c for c in sent[0] if isinstance(c.source, RecipeSource)]
    assert len(recipes) == len(plan.recipes) == 5 and len(sent[0]) == 10  # 5 clips as they are + 5 recipes
    assert all(r.source.nbytes() < 4000 for r in recipes)
    assert {load_clip_audio(c).audio_hash for c in recipes} == {r.provenance.output_hash for r in plan.recipes}
