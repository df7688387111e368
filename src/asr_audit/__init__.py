"""asr-audit: does a speech-recognition model listen, or recite the benchmark's answer key?"""

__version__ = "0.1.0"
