"""hf-ctc: a tiny randomly initialised Wav2Vec2ForCTC, and the CTC probability maths."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from asr_audit.models.ctc_scoring import ctc_log_likelihood, ctc_prefix_log_probs

VOCAB = ["<pad>", "<unk>", "|", "a", "b", "c", "d", "e"]


def _collapse(path: tuple[int, ...], blank: int = 0) -> tuple[int, ...]:
    out, prev = [], None
    for c in path:
        if c != prev and c != blank:
            out.append(c)
        prev = c
    return tuple(out)


def test_ctc_maths_against_brute_force_enumeration() -> None:
    rng = np.random.default_rng(0)
    T, V = 6, 4
    logp = np.log(rng.dirichlet(np.ones(V), size=T))
    probs: dict[tuple[int, ...], float] = {}
    for path in itertools.product(range(V), repeat=T):
        key = _collapse(path)
        probs[key] = probs.get(key, 0.0) + float(np.exp(sum(logp[t, c] for t, c in enumerate(path))))
    for labels in [(1,), (1, 1), (1, 2, 1), (3, 3, 2), (2, 1, 3, 1)]:
        assert ctc_log_likelihood(logp, labels, 0) == pytest.approx(np.log(probs[labels]), abs=1e-9)
        want = [np.log(sum(p for k, p in probs.items() if k[:u] == labels[:u])) for u in range(1, len(labels) + 1)]
        np.testing.assert_allclose(ctc_prefix_log_probs(logp, labels, 0), want, atol=1e-9)
    assert ctc_log_likelihood(logp, (1, 1, 1, 1), 0) == -np.inf  # needs 7 frames
    assert ctc_prefix_log_probs(logp, (), 0).shape == (0,)


@pytest.fixture(scope="module")
def tiny_ctc(tmp_path_factory: pytest.TempPathFactory):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from asr_audit.models.base import load_backend

    model_dir: Path = tmp_path_factory.mktemp("tiny-w2v2")
    (model_dir / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(VOCAB)}))
    tokenizer = transformers.Wav2Vec2CTCTokenizer(
        str(model_dir / "vocab.json"), unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|"
    )
    extractor = transformers.Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=16_000, padding_value=0.0, do_normalize=True, return_attention_mask=True
    )
    transformers.Wav2Vec2Processor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(model_dir)
    torch.manual_seed(0)
    config = transformers.Wav2Vec2Config(
        vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        conv_dim=(16, 16, 16), conv_stride=(5, 4, 4), conv_kernel=(10, 4, 4), num_conv_pos_embeddings=8,
        num_conv_pos_embedding_groups=2, pad_token_id=0, feat_extract_norm="layer", do_stable_layer_norm=True,
    )  # fmt: skip
    model = transformers.Wav2Vec2ForCTC(config).eval()
    with torch.no_grad():  # a sharper head so greedy paths are not all blank
        model.lm_head.weight.mul_(40.0)
    model.save_pretrained(model_dir)
    return load_backend(f"hf-ctc:{model_dir}")


@pytest.fixture(scope="module")
def clips() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.standard_normal(n).astype(np.float32) * 0.1 for n in (8000, 5600, 12000)]


def test_transcribe_is_greedy_ctc_and_batch_independent(tiny_ctc, clips) -> None:
    torch = pytest.importorskip("torch")
    texts = tiny_ctc.transcribe(clips)
    assert texts == [tiny_ctc.transcribe([c])[0] for c in clips]
    assert set("".join(texts).replace("<unk>", "")) <= set("abcde ")
    assert any(texts)
    # decode plumbing: collapse the argmax path by hand
    values = tiny_ctc.feature_extractor(clips[0], sampling_rate=16_000, return_tensors="pt").input_values
    with torch.no_grad():
        path = tiny_ctc.torch_model(values).logits[0].argmax(-1).tolist()
    by_hand = "".join(VOCAB[i] for i in _collapse(tuple(path))).replace("|", " ").strip()
    assert texts[0] == " ".join(by_hand.split())


def test_length_sorted_batches_mask_the_padding(tiny_ctc, clips, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of 2 sort the clips by length (12000 + 8000 samples, then 5600): padded rows give
    the unbatched frames, transcripts and likelihoods, back in input order."""
    alone = [tiny_ctc._log_probs([c])[0] for c in clips]
    texts = [tiny_ctc.transcribe([c])[0] for c in clips]
    lls = [tiny_ctc.log_likelihood([c], ["abc"])[0] for c in clips]
    monkeypatch.setattr(tiny_ctc, "batch_size", 2)
    got = tiny_ctc._sorted_log_probs(clips)
    assert [i for i, _ in got] == [2, 0, 1]
    for i, lp in got:
        assert lp.shape == alone[i].shape
        np.testing.assert_allclose(lp, alone[i], atol=1e-4)
    assert tiny_ctc.transcribe(clips) == texts
    np.testing.assert_allclose(tiny_ctc.log_likelihood(clips, ["abc"] * 3), lls, rtol=1e-5)


def test_log_likelihood_equals_minus_ctc_loss(tiny_ctc, clips) -> None:
    torch = pytest.importorskip("torch")
    text = "abc dea"
    ours = tiny_ctc.log_likelihood(clips[:1], [text])[0]
    values = tiny_ctc.feature_extractor(clips[0], sampling_rate=16_000, return_tensors="pt").input_values
    with torch.no_grad():
        logp = torch.log_softmax(tiny_ctc.torch_model(values).logits.double(), -1)
    labels = torch.tensor([[VOCAB.index("|" if ch == " " else ch) for ch in text]])
    loss = torch.nn.functional.ctc_loss(
        logp.transpose(0, 1),
        labels,
        torch.tensor([logp.shape[1]]),
        torch.tensor([labels.shape[1]]),
        blank=0,
        reduction="sum",
    )
    assert ours == pytest.approx(-loss.item(), rel=1e-6)  # float32 vs float64 log-softmax


def test_score_is_a_chain_rule_over_prefix_probabilities(tiny_ctc, clips) -> None:
    whole, tail, head = tiny_ctc.score([clips[2]] * 3, ["", "ab c", ""], ["AB C dd", "dd", "ab c"])
    assert whole.tokens == ("a", "b", "|", "c", "|", "d", "d")  # upper case folded to the vocab's case
    assert tail.tokens == ("|", "d", "d")  # a non-empty prefix gives the target a leading delimiter
    np.testing.assert_allclose(tail.logprobs, whole.logprobs[-3:], atol=1e-9)
    assert head.total + tail.total == pytest.approx(whole.total, rel=1e-6)  # float32 forward passes
    # a prefix probability is at least the complete-transcript probability
    assert whole.total >= tiny_ctc.log_likelihood([clips[2]], ["ab c dd"])[0]
    assert all(lp <= 1e-12 for lp in whole.logprobs)


def test_every_site_follows_the_mech_grammar(tiny_ctc, clips) -> None:
    """``layer_sites`` parses every site name: a name outside the grammar made it fail on wav2vec2."""
    from asr_audit.mech.sites import layer_sites, parse_site

    sites = tiny_ctc.sites()
    assert sites[0] == "encoder.in" and sites[-1] == "encoder.head"
    assert [parse_site(s) for s in sites] == [
        ("encoder", None, "in"),
        ("encoder", 0, "self_attn"),
        ("encoder", 0, "mlp"),
        ("encoder", 0, "out"),
        ("encoder", 1, "self_attn"),
        ("encoder", 1, "mlp"),
        ("encoder", 1, "out"),
        ("encoder", None, "head"),
    ]
    assert layer_sites(tiny_ctc, "encoder", "out") == ["encoder.layers.0.out", "encoder.layers.1.out"]
    assert layer_sites(tiny_ctc, "decoder", "cross_attn") == []
    seen: list[tuple[int, ...]] = []
    handle = tiny_ctc.site_module("encoder.head").register_forward_hook(
        lambda mod, args, out: seen.append(tuple(out.shape))
    )
    try:
        tiny_ctc.transcribe([clips[0]])
    finally:
        handle.remove()
    assert len(seen) == 1 and seen[0][-1] == len(VOCAB)  # the head emits one logit per vocabulary entry


def test_sites_and_wrong_kind(tiny_ctc, tmp_path: Path) -> None:
    from asr_audit.errors import BackendError
    from asr_audit.models.base import load_backend

    assert "encoder.layers.1.out" in tiny_ctc.sites() and tiny_ctc.sites()[-1] == "encoder.head"
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "whisper"}))
    with pytest.raises(BackendError, match="use hf:"):
        load_backend(f"hf-ctc:{tmp_path}")
