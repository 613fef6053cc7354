"""Models of the grading app."""
