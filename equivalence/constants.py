"""Limits shared by the API, the worker and the engine (no heavy imports here)."""
MODES = ("default", "strict")
MAX_ANSWER_CHARS = 5000  # a longer answer (after extraction from a solution) is undecided without being parsed
MAX_SOLUTION_CHARS = 20_000  # a longer solution is undecided without being read
MAX_TIMEOUT = 120.0  # seconds
