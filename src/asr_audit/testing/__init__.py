"""Factories for tests and benchmarks: seeded synthetic data with known ground truth."""

from asr_audit.testing.synthetic import PlantedError, SyntheticSet, make_prediction_set

__all__ = ["PlantedError", "SyntheticSet", "make_prediction_set"]
