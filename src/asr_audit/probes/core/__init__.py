"""The probe contract every front door calls: :class:`Probe`, :class:`ProbeInputs`, :class:`ModelPool`."""
