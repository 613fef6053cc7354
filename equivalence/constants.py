"""Limits shared by the API, the worker and the engine (no heavy imports here)."""
MODES = ("default", "strict")
MAX_ANSWER_CHARS = 5000  # longer answers are undecided without being parsed
MAX_TIMEOUT = 120.0  # seconds
