"""PyTorch Whisper: bundled weights rebuilt from CTranslate2, hf:<dir>, scoring and hook sites."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from asr_audit.errors import ConfigError
from asr_audit.models.base import DecodeOptions, load_backend

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("ctranslate2")


@pytest.mark.slow
def test_rebuilt_tiny_en_decodes_exactly_like_ctranslate2(tiny_pt, tiny_ct2_librivox, librivox) -> None:
    assert tiny_pt.transcribe(librivox[0]) == tiny_ct2_librivox  # tiny_ct2.transcribe(the same five clips)


@pytest.mark.slow
def test_rebuilt_base_decodes_exactly_like_ctranslate2(base_ct2, base_ct2_librivox, librivox, wer) -> None:
    audios, refs = librivox
    pt, ct2 = load_backend("whisper-base-pt"), base_ct2
    hyps = pt.transcribe(audios)
    assert hyps == base_ct2_librivox  # ct2.transcribe(the same five clips)
    assert wer(refs, hyps) < 0.04
    assert pt.identity().weights_hash == ct2.identity().weights_hash


def test_tiny_pt_identity_and_transcript(tiny_pt, tiny_ct2, librivox) -> None:
    assert tiny_pt.capabilities == {"transcribe", "score", "sites"}
    assert tiny_pt.identity().spec == "whisper-tiny.en-pt"
    assert tiny_pt.identity().weights_hash == tiny_ct2.identity().weights_hash  # same source weights
    assert tiny_pt.transcribe([librivox[0][4]]) == ["He might even have been made amiable himself."]


def test_score_tokens_and_prefix_boundary(tiny_pt, librivox) -> None:
    audio = librivox[0][1]  # "He was not an ill disposed young man"
    whole, split, wrong = tiny_pt.score(
        [audio] * 3, ["", "He was not", "He was not"], ["He was not an ill", "an ill", "a green"]
    )
    assert "".join(whole.tokens) == " He was not an ill"
    assert split.tokens == (" an", " ill")
    # teacher forcing: the prefix's tokens condition the target exactly as in one longer target
    np.testing.assert_allclose(split.logprobs, whole.logprobs[-2:], atol=1e-4)
    assert all(lp <= 0 for lp in whole.logprobs)
    assert split.total > wrong.total  # the heard words beat words that were not said
    assert tiny_pt.score([audio], ["x"], [""]) == [type(whole)((), ())]
    with pytest.raises(ConfigError, match="equal numbers"):
        tiny_pt.score([audio], ["", ""], ["a"])


def test_sites_grammar_and_hooks_fire(tiny_pt, librivox) -> None:
    sites = tiny_pt.sites()
    n_enc, n_dec = 4, 4  # tiny: 4 + 4 layers
    assert len(sites) == 3 * n_enc + 1 + 1 + 4 * n_dec + 1
    assert sites[:3] == ["encoder.layers.0.self_attn", "encoder.layers.0.mlp", "encoder.layers.0.out"]
    assert "decoder.layers.3.cross_attn" in sites and sites[-1] == "decoder.out"
    from asr_audit.mech.sites import layer_sites, parse_site

    assert all(parse_site(s) for s in sites)  # every name follows the mech grammar
    assert layer_sites(tiny_pt, "decoder", "cross_attn") == [f"decoder.layers.{i}.cross_attn" for i in range(n_dec)]
    seen: list[tuple[int, ...]] = []
    handle = tiny_pt.site_module("decoder.layers.0.cross_attn").register_forward_hook(
        lambda mod, args, out: seen.append(tuple((out[0] if isinstance(out, tuple) else out).shape))
    )
    try:
        tiny_pt.transcribe([librivox[0][1]])
    finally:
        handle.remove()
    assert seen and seen[0][-1] == 384
    with pytest.raises(ConfigError, match="no hook site"):
        tiny_pt.site_module("decoder.layers.9.out")
    assert tiny_pt.torch_model.training is False


def test_hf_backend_loads_a_saved_directory(tiny_pt, librivox, tmp_path: Path) -> None:
    tiny_pt.torch_model.save_pretrained(tmp_path)
    tiny_pt.processor.save_pretrained(tmp_path)
    from asr_audit.models.whisper_torch import TorchWhisperBackend

    backend = load_backend(f"hf:{tmp_path}")
    assert isinstance(backend, TorchWhisperBackend)  # it scores, too
    assert backend.identity().spec == f"hf:{tmp_path}"
    assert len(backend.identity().weights_hash) == 16
    audios = librivox[0][1:3]
    assert backend.transcribe(audios) == tiny_pt.transcribe(audios)
    np.testing.assert_allclose(
        backend.score(audios[:1], [""], ["He was not"])[0].logprobs,
        tiny_pt.score(audios[:1], [""], ["He was not"])[0].logprobs,
        atol=1e-5,
    )


def test_device_and_option_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_AUDIT_DEVICE", "tpu")
    with pytest.raises(ConfigError, match="device 'tpu' is unknown"):
        load_backend("whisper-tiny.en-pt")
    monkeypatch.delenv("ASR_AUDIT_DEVICE")
    with pytest.raises(ConfigError, match="greedily"):
        load_backend("whisper-tiny.en-pt", DecodeOptions(beam_size=4))


def test_loading_draws_no_third_party_progress_bar(tiny_pt, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """transformers' "Loading weights" bar stays off while a backend loads (it would interleave
    with asr-audit's own progress display), and the caller's setting comes back afterwards."""
    from transformers.utils import logging as hf_logging

    tiny_pt.torch_model.save_pretrained(tmp_path)
    tiny_pt.processor.save_pretrained(tmp_path)
    hf_logging.enable_progress_bar()
    capfd.readouterr()
    load_backend(f"hf:{tmp_path}")
    assert "Loading weights" not in capfd.readouterr().err
    assert hf_logging.is_progress_bar_enabled()
