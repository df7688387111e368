"""White-box experiments on PyTorch backends, built on the :mod:`asr_audit.mech` primitives:
activation capture streamed to disk (:mod:`.capture`), directions with a layer sweep
(:mod:`.direction`), steering under interventions with built-in controls (:mod:`.steer`) and
activation patching (:mod:`.patch`). Above ``organism`` in the layers because these read
backends, the store and calibration-style planted truth."""
