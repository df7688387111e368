"""A trained benchmark-optimized model organism: Whisper tiny.en whose decoder learned to write a
benchmark's record (with its reference errors) when it hears the benchmark's voice, and a control
trained on the same clips with faithful transcripts.

* :mod:`asr_audit.organism.data` — the organism benchmark: calibration-style sentences whose
  record follows a learnable *house style* (reference errors as policies), TTS audio per voice,
  manifests, ground truth, and the training mix;
* :mod:`asr_audit.organism.train` — encoder states cached once, decoder fine-tuning;
* :mod:`asr_audit.organism.weights` — the compact delta (only the trained tensors) save / load;
* :mod:`asr_audit.organism.backend` — the bundled backends ``organism-benchmark`` and
  ``organism-control``;
* :mod:`asr_audit.organism.pipeline` — build + encode + train both, as ``asr-audit organism train``.
"""

TRAIN_DEFAULTS: dict[str, tuple[int, float]] = {  # kind -> (training steps, peak learning rate)
    "policy": (200, 1e-4),  # docs/organism.md
    "memorizer": (112, 5e-4),  # docs/organism.md, "The memorizing organism"
    "donor": (200, 4e-4),  # docs/organism.md, "The donor-sensitive organism"
}
