"""Run as a script by test_export_memory.py: build a scratch database, or export from it and
print the process's peak memory. A fresh process per export, so the peak is the export's own.

    python memory_probe.py populate SMALL BIG     # in REALMATH_VAR_DIR: exams "small" and "big"
    python memory_probe.py export FORMAT EXAM|all OUT
"""
import os
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

TRANSCRIPT = "Since $f'(x) > 0$ on the interval, the function increases; " * 50  # about 3 KB


def populate(small, big):
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from annotation.models import Exam, Label, Question, Response, content_hash

    call_command("migrate", verbosity=0)
    expert = User.objects.create(username="expert")
    for name, n in (("small", small), ("big", big)):
        exam = Exam.objects.create(name=name)
        question = Question.objects.create(exam=exam, statement=name, statement_hash=content_hash(name), full_score=10)
        for start in range(0, n, 2000):
            created = Response.objects.bulk_create(
                Response(question=question, student_id=f"{name}{i}", transcript=f"{i} {TRANSCRIPT}",
                         transcript_hash=content_hash(f"{name}{i}"), gold_score=i % 11)
                for i in range(start, min(n, start + 2000))
            )
            Label.objects.bulk_create(
                Label(response=r, annotator=expert, total=r.gold_score, sub_scores={"(1)": 1}, submitted=True,
                           comment="checked")
                for r in created
            )


def export(fmt, exam, out):
    from annotation.export.writers import write_export
    from annotation.models import Exam, Response

    responses = Response.objects.all()
    if exam != "all":
        responses = responses.filter(question__exam=Exam.objects.get(name=exam))
    manifest = write_export(responses, fmt, out)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(manifest["counts"]["responses"], round(peak_mb, 1))


if __name__ == "__main__":
    import django

    django.setup()
    if sys.argv[1] == "populate":
        populate(int(sys.argv[2]), int(sys.argv[3]))
    else:
        export(*sys.argv[2:5])
