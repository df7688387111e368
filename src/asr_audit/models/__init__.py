"""asr_audit.models"""
