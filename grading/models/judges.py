"""Judge settings, runs and results."""
