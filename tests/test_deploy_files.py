"""The deployment people copy (docs/deploy.md, docs/compose.yaml): the compose file parses, runs one
beat and a worker per queue, and names only environment variables the settings read."""
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = (ROOT / "config" / "settings.py").read_text()
READ = set(re.findall(r'env_\w+\("([A-Z0-9_]+)"', SETTINGS)) | {"OMP_THREAD_LIMIT"}
READ |= {"OPENAI_API_KEY"}  # an API key: read at call time by llm.read_api_key, never a setting


def test_compose_services_and_variables():
    compose = yaml.safe_load((ROOT / "docs" / "compose.yaml").read_text())
    services = compose["services"]
    assert {"db", "redis", "minio", "web", "worker-ocr", "worker-judges", "worker-default", "beat"} <= set(services)
    assert sum("beat" in str(s.get("command", "")) for s in services.values()) == 1
    env = services["web"]["environment"]
    assert set(env) <= READ, set(env) - READ
    for queue_var, queue in (("OCR_QUEUE", "ocr"), ("REALMATH_JUDGE_QUEUE", "judges")):
        assert env[queue_var] == queue and f"-Q {queue}" in services[f"worker-{queue}"]["command"]


def test_the_guide_names_only_variables_the_settings_read():
    guide = (ROOT / "docs" / "deploy.md").read_text()
    named = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", guide, re.M))
    assert named and named <= READ | {"OPENAI_API_KEY"}, named - READ
