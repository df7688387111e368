"""asr_audit.runner"""
