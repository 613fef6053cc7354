"""Import memory does not grow with the size of the file: it is read in blocks, written in batches."""
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REALMATH_HUMAN

PROBE = Path(__file__).with_name("import_memory_probe.py")
SMALL, BIG = 2_000, 8_000  # records of about 7 KB: the big file is 40 MB larger
MARGIN_MB = 30


def _write(path, n):
    template = json.loads(REALMATH_HUMAN.read_text())
    with path.open("w") as handle:
        handle.write("[")
        for i in range(n):
            record = dict(template[i % len(template)])
            record["student_id"] = f"{i:032x}"
            record["student_response"] += f"\n(sheet {i})"
            handle.write(("," if i else "") + json.dumps(record))
        handle.write("]")


def _import(tmp_path, n):
    folder = tmp_path / str(n)
    folder.mkdir()
    _write(folder / "release.json", n)
    env = {**os.environ, "REALMATH_VAR_DIR": str(folder), "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("DATABASE_URL", None)
    result = subprocess.run([sys.executable, str(PROBE), str(folder / "release.json")], env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    created, peak = result.stdout.split()
    return int(created), float(peak)


def test_peak_memory_does_not_grow_with_the_file(tmp_path):
    small_created, small_peak = _import(tmp_path, SMALL)
    big_created, big_peak = _import(tmp_path, BIG)
    assert (small_created, big_created) == (SMALL, BIG)
    assert big_peak - small_peak < MARGIN_MB, (small_peak, big_peak)
