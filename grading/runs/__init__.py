"""Runs of LLM calls in Celery chunks, one home for every kind (judge, generation, meta-evaluation,
probe and geometry runs): `models.AbstractRun` (what every run model has), `engine` (`RunEngine`:
enqueue, cancel, resume, finish, the watchdog, the chunk loop), `claims` (owner tags, leases,
take-over, the claim loop), `tasks` (the watchdog's Celery tasks), `views` and `api` (progress,
cancel and resume pages and API actions). Import the module you need: nothing is re-exported here.
"""
