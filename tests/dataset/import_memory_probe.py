"""Run as a script by test_import_memory.py: import a release-format file into a fresh scratch
database (REALMATH_VAR_DIR) and print the records created and the process's peak memory (MB)."""
import os
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

if __name__ == "__main__":
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.importers import import_realmath

    call_command("migrate", verbosity=0)
    path = Path(sys.argv[1])
    with path.open("rb") as stream:
        result = import_realmath(stream, path.name)
    print(result.counts["responses_created"], round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1))
