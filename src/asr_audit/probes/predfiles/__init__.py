"""Prediction-file probes: they read normalized reference and hypothesis texts only.

reference disagreement (`refdis`, run by `refdis_run`), counterfactual WER (`inflation`), the
switch rate (`ortho`, families in `conventions`).
"""
