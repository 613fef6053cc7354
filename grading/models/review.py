"""Judge-vs-human review: meta-evaluation and judge validation."""
