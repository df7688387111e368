"""asr_audit.mech"""
