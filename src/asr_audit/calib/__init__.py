"""Calibration benchmark with planted ground truth: a seeded parliament-style TTS corpus whose
reference errors are known, and a scorer for the consensus miner's precision and recall.

* :mod:`asr_audit.calib.templates` — vocabulary, templates, spoken numbers;
* :mod:`asr_audit.calib.generate` — sentences as units, planting errors, rendering;
* :mod:`asr_audit.calib.truth` — locating items in the normalized reference; ``truth.jsonl``;
* :mod:`asr_audit.calib.build` — synthesizing audio and writing the set;
* :mod:`asr_audit.calib.score` — matching mined edits to planted errors.
"""
