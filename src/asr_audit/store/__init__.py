"""asr_audit.store: the persistent SQLite result cache and prediction-file export."""

from asr_audit.store.export import PredictionRecord, prediction_file_name, write_predictions
from asr_audit.store.sqlite import Store, default_store_path, open_store

__all__ = ["PredictionRecord", "Store", "default_store_path", "open_store", "prediction_file_name", "write_predictions"]
