"""White-box interventions on PyTorch backends: hook-site names (:mod:`.sites`), hook context
managers that always clean up (:mod:`.hooks`), and attention isolation (:mod:`.isolate`)."""
