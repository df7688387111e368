"""Teacher-forced audio lift on whisper-tiny.en rebuilt in PyTorch."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import pytest

import asr_audit.cli.audio_probes  # noqa: F401 - registers masked / lift / continue on the app
from asr_audit.audio.io import load_audio
from asr_audit.errors import BackendError
from asr_audit.probes.audio.lift import Scorer, Span, ortho_spans, refdis_spans, run_lift, score_spans
from asr_audit.probes.core.models import LocalModel


@pytest.fixture(scope="module")
def two_clips(corpus):
    return dataclasses.replace(
        corpus, clips=tuple(c for c in corpus if c.id in ("slt-chair.flac", "librivox-0880.flac"))
    )


@pytest.fixture(scope="module")
def full_lift(tiny_pt, two_clips, store):
    return run_lift([LocalModel.of(tiny_pt)], two_clips, store, "full", n_resamples=200)


def test_correct_transcript_gets_positive_lift_and_silence_is_the_prior(full_lift, tiny_pt, two_clips) -> None:
    recs = full_lift.records
    assert len(recs) == 2 and all(r.error is None for r in recs)
    for r in recs:
        assert r.lift > 0.3, r  # nats per character
        assert r.logp > r.logp_silent
        assert r.logprobs and sum(r.logprobs) == pytest.approx(r.logp, abs=1e-6)  # per-token sums = total
        assert r.chars == sum(not c.isspace() for c in r.target)
    # the silent condition is the model's prior: scoring the zero waveform directly gives logp_silent,
    # and the lift of the zero waveform against itself is 0
    clip = next(c for c in two_clips if c.id == recs[0].clip_id)
    scorer = Scorer(LocalModel.of(tiny_pt))
    zero = np.zeros(len(load_audio(clip)), dtype=np.float32)
    silent = score_spans(scorer, [Span("z", clip.id, "silent", "z", "", clip.reference)], {"z": zero})[0]
    assert silent.logp == pytest.approx(recs[0].logp_silent, abs=1e-4)
    assert silent.lift == pytest.approx(0.0, abs=1e-6)
    m = full_lift.models[0]
    assert m["lift_mean"] > 0 and m["n"] == 2
    assert (m["ci_low"], m["ci_high"]) == (None, None)  # 2 sentences: no sign-flip test can reject at 95%
    assert m["scored_rows"] == 4 and m["rows_per_item"] == 2.0


def test_token_scores_follow_the_chain_rule(tiny_pt, corpus) -> None:
    clip = next(c for c in corpus if c.id == "slt-chair.flac")
    x = load_audio(clip)
    whole, head, tail = tiny_pt.score([x, x, x], ["She paid"] * 2 + ["She paid 45"], ["45 dollars", "45", "dollars"])
    assert whole.total == pytest.approx(head.total + tail.total, abs=1e-3)
    assert len(whole.tokens) == len(head.tokens) + len(tail.tokens)


@dataclasses.dataclass(frozen=True)
class _Counted(LocalModel):
    """A local model handle that counts the rows it is asked to score."""

    asked: list[int] = dataclasses.field(default_factory=list)

    def score(self, chunks: Any) -> Any:
        self.asked.extend(len(c) for c in chunks)
        return super().score(chunks)


def test_scores_are_cached_in_the_store(tiny_pt, two_clips, store, full_lift) -> None:
    counted = _Counted(tiny_pt.spec, tiny_pt)
    again = run_lift([counted], two_clips, store, "full", n_resamples=200)
    assert counted.asked == [] and again.models[0]["scored_rows"] == 4  # every row read back, none computed
    assert [r.lift for r in again.records] == pytest.approx([r.lift for r in full_lift.records])


@pytest.mark.slow
def test_masked_number_lift_drops_when_the_number_is_silenced(tiny_pt, number_corpus, store, aligner) -> None:
    three = dataclasses.replace(number_corpus, clips=number_corpus.clips[:3])
    res = run_lift([LocalModel.of(tiny_pt)], three, store, "masked", aligner=aligner, n_resamples=200, decoys=0)
    m = res.models[0]
    un, ma = m["conditions"]["unmasked"]["lift"], m["conditions"]["masked"]["lift"]
    assert un["n"] == ma["n"] == 3
    assert un["mean"] > 0.3 and ma["mean"] < un["mean"]
    paired = m["paired"]["unmasked-masked"]
    lifts = {(r.item_id, r.condition): r.lift for r in res.records}
    assert paired["mean"] > 0 and all(lifts[i, "unmasked"] > lifts[i, "masked"] for i, _ in lifts)
    # 3 sentences: 8 sign patterns, no test at 95% can reject, so the interval is undefined (no flag)
    assert (paired["ci_low"], paired["ci_high"]) == (None, None)
    assert m["rows_per_item"] == pytest.approx(1.5)  # masked + unmasked + one shared silent row per item


def test_refdis_and_ortho_spans() -> None:
    refdis = {
        "references": {"c1": "madam president we agree on this"},
        "edits": [
            {"clip_id": "c1", "kind": "deletion", "ref_indices": [0, 1], "alt_text": ""},
            {"clip_id": "c1", "kind": "substitution", "ref_indices": [4], "alt_text": "in"},
            {"clip_id": "other", "kind": "deletion", "ref_indices": [0], "alt_text": ""},
        ],
    }
    spans = refdis_spans(refdis, ["c1"])
    assert [(s.prefix, s.target, s.alt) for s in spans] == [
        ("", "madam president we", "we"),
        ("madam president we agree", "on this", "in this"),
    ]
    clip = type("C", (), {"id": "c2", "reference": "I thank Mr. Smith and every one of you."})()
    got = {(s.target, s.alt, s.prefix) for s in ortho_spans([clip])}
    assert ("Mr. Smith", "Mister Smith", "I thank") in got
    assert ("every one of", "everyone of", "I thank Mr. Smith and") in got


def test_backends_without_score_are_refused(copier, two_clips, store, run_cli, store_path) -> None:
    with pytest.raises(BackendError, match="cannot score"):
        run_lift([LocalModel.of(copier)], two_clips, store, "full")
    from audio_probe_paths import MANIFEST

    code, _, err = run_cli(
        "lift", "--model", "whisper-tiny.en", "--corpus", MANIFEST, "--spans", "full", "--store", store_path
    )
    assert code == 2 and "cannot score" in err and "Traceback" not in err


def test_lift_cli_json(run_cli, store_path, full_lift, tmp_path) -> None:
    from audio_probe_paths import MANIFEST

    out = tmp_path / "lift.json"
    code, stdout, err = run_cli(
        "lift",
        "--model",
        "whisper-tiny.en-pt",
        "--corpus",
        MANIFEST,
        "--spans",
        "full",
        "--limit",
        "2",
        "--store",
        store_path,
        "--json",
        out,
    )
    assert code == 0, err
    data = json.loads(out.read_text())
    m = data["models"][0]
    assert {"lift_mean", "n", "ci_low", "ci_high"} <= set(m) and m["n"] == 2 and m["lift_mean"] > 0
    assert all(i["clip_id"] and i["lift"] > 0 for i in data["items"])


class _PickyScorer:
    """TEST DOUBLE: scores each character at -1 nat with audio, -2 without; refuses targets containing 'x'."""

    spec = "test-double:picky"
    capabilities = frozenset({"transcribe", "score"})
    max_duration = None

    def identity(self):
        from asr_audit.models.base import BackendIdentity

        return BackendIdentity(self.spec, "0")

    def score(self, audios, prefixes, targets):
        from asr_audit.models.base import TokenScores

        if any("x" in t for t in targets):
            raise BackendError("target with x")
        return [TokenScores(tuple(t), tuple(-1.0 if np.any(a) else -2.0 for _ in t)) for a, t in zip(audios, targets)]


def test_one_failing_row_does_not_sink_the_batch() -> None:
    audio = {"a": np.ones(1600, dtype=np.float32)}
    spans = [
        Span("i1", "c", "full", "a", "", "abc"),
        Span("i2", "c", "full", "a", "", "xyz"),
        Span("i3", "c", "full", "a", "", "de", alt="d"),
    ]
    recs = score_spans(Scorer(LocalModel.of(_PickyScorer())), spans, audio)
    assert [r.error is None for r in recs] == [True, False, True]
    assert recs[0].lift == pytest.approx(1.0) and recs[0].logp == -3.0 and recs[0].logp_silent == -6.0
    assert recs[2].compare == pytest.approx(0.0)  # both renderings at -1 nat per character
    assert recs[1].to_dict()["lift"] is None  # NaN never reaches JSON


def test_intelligibility_gate_scores_only_sentences_the_model_transcribes(tiny_pt, two_clips, store, tmp_path) -> None:
    """The paper's gate: a sentence whose unmasked transcript misses the reference is not scored, and
    the counts (kept / gated out) reach the JSON, the table and the report section."""
    from rich.console import Console

    from asr_audit.probes.audio.lift import LiftOptions
    from asr_audit.report.html import build_report
    from asr_audit.report.tables import lift_table

    # one clip gets another sentence's reference: the model's transcript of it has a WER far above 0.3
    wrong = dataclasses.replace(
        two_clips,
        clips=(
            two_clips.clips[0],
            dataclasses.replace(
                two_clips.clips[1], reference="the committee adjourned the vote on the budget until next spring"
            ),
        ),
    )
    res = run_lift([LocalModel.of(tiny_pt)], wrong, store, "full", n_resamples=50)
    m = res.models[0]
    assert (m["n_clips_kept"], m["n_clips_gated_out"], m["n_kept"], m["n_gated_out"]) == (1, 1, 1, 1)
    assert m["n"] == 1 and [r.clip_id for r in res.records] == [two_clips.clips[0].id]
    gate = {g.clip_id: g for g in res.gate}
    assert gate[two_clips.clips[1].id].clip_wer > 0.3 and not gate[two_clips.clips[1].id].kept
    assert gate[two_clips.clips[0].id].clip_wer <= 0.3 and gate[two_clips.clips[0].id].kept
    data = res.to_dict()
    assert data["gate_max_wer"] == 0.3 and {g["reason"] for g in data["gate"]} == {"", "wer_above_gate"}
    console = Console(width=200, record=True)
    console.print(lift_table(data, "two", "full"))
    text = console.export_text()
    assert "1 kept / 1 out" in text and "WER <= 0.30" in text
    html = build_report(
        {"title": "t", "probes": [{"probe": "lift", "corpus": "two", "result": data}]}, tmp_path
    ).read_text()
    assert "Intelligibility gate" in html
    assert (tmp_path / "tables" / "lift-two-gate.csv").read_text().splitlines()[1].endswith(",1,1,1,1")
    # the gate off keeps both sentences; the default is the paper's gate
    off = run_lift([LocalModel.of(tiny_pt)], wrong, store, "full", n_resamples=50, gate_max_wer=float("inf"))
    assert off.models[0]["n_kept"] == 2 and off.models[0]["n_gated_out"] == 0
    assert LiftOptions().gate_max_wer == 0.3


def test_lift_intervals_cluster_by_sentence_not_by_clip() -> None:
    """One sentence read in three voices is one cluster: two sentences give the widest interval."""
    from asr_audit.probes.audio.lift import LiftRecord, lift_by_voice, summarize_model
    from asr_audit.probes.audio.targets import sentence_key

    def rec(clip: str, lift: float) -> LiftRecord:
        return LiftRecord("m", clip, clip, "full", "", "t", (), (), 0.0, 0.0, 1, lift)

    refs = {"a-v1": "We agree.", "a-v2": "we agree", "a-v3": "We agree!", "b-v1": "No.", "b-v2": "no", "b-v3": "No!"}
    recs = [rec(c, 1.0 if c.startswith("a") else 0.0) for c in refs]
    by_clip = summarize_model(recs, np.random.default_rng(0), 400)["conditions"]["full"]["lift"]
    by_sentence = summarize_model(
        recs, np.random.default_rng(0), 400, sentences={c: sentence_key(r) for c, r in refs.items()}
    )["conditions"]["full"]["lift"]
    assert by_sentence["mean"] == by_clip["mean"] == 0.5
    # 2 sentences: no sign-flip test can reject at 95% (4 patterns), the interval is undefined
    assert (by_sentence["ci_low"], by_sentence["ci_high"]) == (None, None)
    # 6 "independent" clips: 64 patterns, [smallest, largest] subset mean = [0, 1]: a finite interval
    assert (by_clip["ci_low"], by_clip["ci_high"]) == (0.0, 1.0)
    clips = [type("C", (), {"id": c, "reference": r, "speaker": c[2:]})() for c, r in refs.items()]
    items = [{**r.to_dict(), "condition": "full"} for r in recs] + [
        {**rec(c, 0.5).to_dict(), "condition": "x"} for c in refs
    ]
    rows = lift_by_voice(items, clips, 0, 200)
    assert {(r["condition"], r["voice"]) for r in rows} >= {("full", "v1"), ("x", "v2")}


def _recipe(clip: str, hidden: str, start: int = 1, kind: str = "number") -> object:
    from types import SimpleNamespace

    return SimpleNamespace(clip_id=clip, kind=kind, start=start, hidden_ref=hidden, item_id=f"{clip}__mask")


def test_target_shape_keeps_the_form_and_drops_the_number() -> None:
    from asr_audit.probes.audio.lift import target_shape

    assert target_shape("1999") == target_shape("111") == "#"
    assert target_shape("€82 million") == target_shape("€4 billion") == "€# N"
    assert target_shape("forty-two percent") == target_shape("one hundred and five percent") == "N percent"
    assert target_shape("45%") == "#%" != target_shape("45")
    assert target_shape("nineteen ninety nine") == "N" != target_shape("1999")  # words and digits differ


def test_decoys_are_other_sentences_numbers_of_the_same_form_in_a_seeded_order() -> None:
    from asr_audit.probes.audio.lift import decoy_pools, decoy_targets

    recipes = [
        _recipe("a-v1", "1999"),
        _recipe("a-v2", "1999"),  # the same sentence in another voice: never its own decoy
        _recipe("b", "111"),
        _recipe("c", "2004"),
        _recipe("d", "€82 million"),  # another form
        _recipe("e", "Ward", kind="name"),  # another kind
        _recipe("f", "1,999"),  # the same number written otherwise: not a different number
        _recipe("g", "73"),
    ]
    refs = {"a-v1": "until 1999", "a-v2": "until 1999", "b": "got 111", "c": "in 2004", "d": "spent €82 million"}
    refs |= {"e": "Mr Ward", "f": "until 1,999 now", "g": "for 73"}
    from asr_audit.probes.audio.targets import sentence_key

    sentences = {c: sentence_key(r) for c, r in refs.items()}
    pools = decoy_pools(recipes, sentences)
    got = decoy_targets(recipes[0], pools, sentences, 10, seed=0)
    assert sorted(got) == ["111", "2004", "73"]
    assert decoy_targets(recipes[0], decoy_pools(recipes[::-1], sentences), sentences, 10, seed=0) == got  # order-free
    assert decoy_targets(recipes[0], pools, sentences, 2, seed=0) == got[:2]
    assert any(decoy_targets(recipes[0], pools, sentences, 10, seed=s) != got for s in range(1, 6))
    assert decoy_targets(recipes[0], pools, sentences, 0, seed=0) == []
    assert decoy_targets(recipes[4], pools, sentences, 4, seed=0) == []  # no other amount in euros


def test_masked_spans_score_decoys_on_the_masked_clip_after_the_same_prefix() -> None:
    from asr_audit.probes.audio.lift import masked_spans

    recipes = [_recipe("a", "1999", start=3), _recipe("b", "2004", start=2)]
    refs = {"a": "postponed until then 1999 now", "b": "in the 2004 budget"}
    spans = masked_spans(recipes, refs, decoys=4, seed=0)
    decoys = [s for s in spans if s.condition == "decoy"]
    assert [(s.decoy_of, s.audio_id, s.prefix, s.target) for s in decoys] == [
        ("a__mask", "a__mask", "postponed until then", "2004"),
        ("b__mask", "b__mask", "in the", "1999"),
    ]
    assert [s for s in spans if s.condition != "decoy"] == masked_spans(recipes, refs)  # decoys = 0: unchanged


def test_decoy_contrast_cancels_the_silence_offset() -> None:
    """The raw lift moves with a model's offset over the zero clip; the contrast with the decoys
    (same clip, same prefix) does not, and a hidden number the clip really raises stands out."""
    from asr_audit.probes.audio.lift import LiftRecord, summarize_model

    def records(offset: float, gain: float) -> list[LiftRecord]:
        out = []
        for j in range(12):
            clip, item, base = f"s{j}", f"s{j}__mask", offset + 0.1 * (j % 3)
            out.append(LiftRecord("m", item, clip, "masked", "", "45", (), (), 0.0, 0.0, 2, base + gain))
            out += [
                LiftRecord(
                    "m", f"{item}#decoy{d}", clip, "decoy", "", "7", (), (), 0.0, 0.0, 1, base + e, decoy_of=item
                )
                for d, e in enumerate((-0.05, 0.05))
            ]
        return out

    for offset in (-0.5, 0.0, 0.8):
        honest = summarize_model(records(offset, 0.0), np.random.default_rng(0), 200)
        assert honest["paired"]["masked-decoys"]["mean"] == pytest.approx(0.0, abs=1e-12)
        assert honest["paired"]["masked-decoys"]["n"] == 12
        recalled = summarize_model(records(offset, 0.4), np.random.default_rng(0), 200)
        assert recalled["paired"]["masked-decoys"]["mean"] == pytest.approx(0.4)
        assert recalled["paired"]["masked-decoys"]["ci_low"] > 0
    raw = summarize_model(records(0.8, 0.0), np.random.default_rng(0), 200)["conditions"]["masked"]["lift"]
    assert raw["ci_low"] > 0  # the raw lift of an honest model with a silence offset: a false alarm
    assert (
        "masked-decoys"
        not in summarize_model([r for r in records(0.0, 0.0) if r.condition != "decoy"], np.random.default_rng(0), 50)[
            "paired"
        ]
    )


def test_lift_decoys_option_is_checked() -> None:
    from asr_audit.errors import ConfigError
    from asr_audit.options import Surface
    from asr_audit.probes.audio.lift import DEFAULT_DECOYS, LiftOptions

    assert LiftOptions().decoys == DEFAULT_DECOYS == 4
    assert LiftOptions.from_mapping({"decoys": 0}, Surface.cli()).decoys == 0
    with pytest.raises(ConfigError, match="decoys"):
        LiftOptions.from_mapping({"decoys": -1}, Surface.cli())
