"""Export of the annotated dataset (release format, full JSONL, flat tables) and its import."""
