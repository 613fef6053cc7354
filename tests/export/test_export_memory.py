"""Export memory does not grow with the number of responses (batches are bounded, not the data)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).with_name("memory_probe.py")
SMALL, BIG = 6_000, 18_000  # responses of about 3 KB each: the big export holds 54 MB more text
MARGIN_MB = 30


def _run(env, *args):
    result = subprocess.run([sys.executable, str(PROBE), *args], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.split()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export-memory")
    env = {**os.environ, "REALMATH_VAR_DIR": str(folder), "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("DATABASE_URL", None)
    _run(env, "populate", str(SMALL), str(BIG))
    return env, folder


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])  # csv shares the batches of parquet
def test_peak_memory_does_not_grow_with_the_number_of_responses(scratch, fmt):
    env, folder = scratch
    small_count, small_peak = _run(env, "export", fmt, "small", str(folder / f"{fmt}-small"))
    big_count, big_peak = _run(env, "export", fmt, "all", str(folder / f"{fmt}-all"))
    assert (int(small_count), int(big_count)) == (SMALL, SMALL + BIG)
    assert float(big_peak) - float(small_peak) < MARGIN_MB, (small_peak, big_peak)
