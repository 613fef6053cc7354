"""Synthetic answers: generation runs ask LLMs to answer questions the way students would.

`models` (GenerationRun, GenerationItem), `services` (start, the chunk, cancel, resume: a
`RunEngine` of grading.runs), `selectors` (list, page, progress), `tasks` (the chunk task),
`views`, `urls`, `forms`, `api`, `api_urls`; templates in templates/grading/generation/. It uses
the judges' endpoints and prompt templates (grading.judges), never the other way.
"""
