"""Sentence generation: determinism, labelled items that explain every difference, rates, splits,
and errors planted independently of the sentence type."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from asr_audit.calib.build import generate_sentences, realized_rates
from asr_audit.calib.generate import (
    CONVENTION,
    ERROR_KINDS,
    OMITTED,
    POSITIONS,
    SPURIOUS,
    CalibConfig,
    Unit,
    render,
)
from asr_audit.errors import ConfigError
from asr_audit.text.normalize import get_normalizer

NORM = get_normalizer("whisper")


@pytest.fixture(scope="module")
def big():
    return generate_sentences(CalibConfig(n_sentences=600), np.random.default_rng(7))


def test_same_seed_same_sentences_other_seed_differs() -> None:
    cfg = CalibConfig(n_sentences=30)
    a = generate_sentences(cfg, np.random.default_rng(1))
    b = generate_sentences(cfg, np.random.default_rng(1))
    c = generate_sentences(cfg, np.random.default_rng(2))
    assert a == b
    assert [s.reference for s in a.sentences] != [s.reference for s in c.sentences]


def test_items_explain_every_difference_between_speech_and_record(big) -> None:
    for sent, items in zip(big.sentences, big.items):
        ref = NORM(sent.reference).split()
        rebuilt = list(ref)
        for it in sorted(items, key=lambda i: (i["ref_start"], i["ref_stop"]), reverse=True):
            assert tuple(ref[it["ref_start"] : it["ref_stop"]]) == it["ref_norm"]
            rebuilt[it["ref_start"] : it["ref_stop"]] = it["spoken_norm"]
        assert rebuilt == NORM(sent.spoken).split(), sent.sentence_id
        for it in items:
            if it["kind"] == SPURIOUS:
                assert it["ref_norm"] and not it["spoken_norm"]
            elif it["kind"] == OMITTED:
                assert it["spoken_norm"] and it["ref_start"] == it["ref_stop"]
            elif it["kind"] == CONVENTION and it["detail"] != "spacing":
                assert it["ref_norm"] == it["spoken_norm"]  # orthographic: gone after normalization
            else:
                assert it["ref_norm"] != it["spoken_norm"]


def test_positions_follow_the_normalized_reference(big) -> None:
    for items in big.items:
        for it in items:
            n, s, e = it["n_ref"], it["ref_start"], it["ref_stop"]
            expected = "start" if s == 0 else "end" if e >= n else "middle"
            assert it["position"] == expected


def test_default_rates_are_near_voxpopuli(big) -> None:
    r: dict[str, Any] = realized_rates(big)
    assert 0.34 <= r["error_rate"] <= 0.46
    assert 0.02 <= r["word_error_rate"] <= 0.05
    assert set(r["items_by_kind"]) == {CONVENTION, *ERROR_KINDS}
    assert set(r["errors_by_position"]) == set(POSITIONS)


def test_higher_word_error_rate_plants_more_errors_per_clip() -> None:
    lo: dict[str, Any] = realized_rates(generate_sentences(CalibConfig(n_sentences=300), np.random.default_rng(3)))
    hi: dict[str, Any] = realized_rates(
        generate_sentences(CalibConfig(n_sentences=300, word_error_rate=0.09), np.random.default_rng(3))
    )
    assert hi["word_error_rate"] > 1.5 * lo["word_error_rate"]


def test_kind_and_position_weights_are_respected() -> None:
    cfg = CalibConfig(n_sentences=200, error_rate=1.0, kinds=(("substitution", 1.0),), positions=(("end", 1.0),))
    s = generate_sentences(cfg, np.random.default_rng(0))
    errs = [it for items in s.items for it in items if it["kind"] != CONVENTION]
    assert errs and {(it["kind"], it["position"]) for it in errs} == {("substitution", "end")}


def test_errors_are_not_tied_to_sentence_types(big) -> None:
    """The organism study's lesson: every template and every formality appears both clean and wrong."""
    err_by_tpl: Counter[int] = Counter()
    clean_by_tpl: Counter[int] = Counter()
    for sent in big.sentences:
        for t in sent.template_ids:
            (err_by_tpl if sent.has_error else clean_by_tpl)[t] += 1
    assert set(err_by_tpl) == set(clean_by_tpl)
    # the phrases planted as errors are also said and recorded in clean sentences
    planted = {
        (u.role, u.spoken or u.written) for s in big.sentences for u in s.units if u.error in (SPURIOUS, OMITTED)
    }
    honest = {
        (u.role, u.spoken)
        for s in big.sentences
        for u in s.units
        if not u.error and u.spoken is not None and u.spoken == u.written
    }
    shared = {p for p in planted if p in honest}
    assert len(shared) >= 0.8 * len(planted)


def test_splits_by_sentence_and_by_template() -> None:
    s = generate_sentences(CalibConfig(n_sentences=100, test_fraction=0.25), np.random.default_rng(0))
    assert Counter(x.split for x in s.sentences) == {"train": 75, "test": 25}
    assert len({x.spoken for x in s.sentences}) == 100
    t = generate_sentences(CalibConfig(n_sentences=200, split_by="template"), np.random.default_rng(0))
    test_tpl = {i for x in t.sentences if x.split == "test" for i in x.template_ids}
    train_tpl = {i for x in t.sentences if x.split == "train" for i in x.template_ids}
    assert train_tpl and test_tpl - train_tpl  # held-out templates never occur in training clips
    held = test_tpl - train_tpl
    assert all(not held.intersection(x.template_ids) for x in t.sentences if x.split == "train")


@pytest.mark.parametrize(
    ("kwargs", "flag"),
    [
        ({"n_sentences": 0}, "--n-sentences"),
        ({"error_rate": 1.5}, "--error-rate"),
        ({"kinds": (("bogus", 1.0),)}, "--kinds"),
        ({"positions": (("start", 0.0),)}, "--positions"),
        ({"split_by": "speaker"}, "--split-by"),
    ],
)
def test_bad_config_is_a_one_line_error(kwargs, flag) -> None:
    with pytest.raises(ConfigError, match=flag):
        CalibConfig(**kwargs)


def test_render_capitalizes_and_attaches_punctuation() -> None:
    units = [
        Unit(None, "Madam President,", "opener"),
        Unit("we", "we", "word"),
        Unit("act", "act", "word"),
        Unit(".", ".", "punct"),
        Unit("thank you.", None, "closer"),
    ]
    assert render(units, "written") == "Madam President, we act."
    assert render(units, "spoken") == "We act. Thank you."
