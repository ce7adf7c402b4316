"""docker-compose.yml, the Dockerfile and .dockerignore (no Docker engine here: read, and their commands run).

Every long-running service restarts; migrations run once, before anything else; workers are checked by
``worker_alive`` through the entry point (so the check has the keys the entry point generated); the GPU
worker only starts with its profile; the image runs as an unprivileged user who owns the volumes; ``.env``
never enters the build context; the web check wants exactly 200 from /healthz/.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
import yaml

from factlab.liveness import write_state
from tests.conftest import REPO_ROOT

COMPOSE = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
DOCKERFILE = (REPO_ROOT / "Dockerfile").read_text()
WORKERS = {name: s for name, s in SERVICES.items() if "celery -A factlab worker" in str(s.get("command", ""))}
APP = {name: s for name, s in SERVICES.items() if s.get("image") == "factlab:latest"}


def test_long_running_services_restart_and_wait_for_a_one_off_migration():
    assert set(WORKERS) >= {"worker", "cpu-worker", "gpu-worker"}
    long_running = set(SERVICES) - {"migrate"}
    assert {name for name in long_running if SERVICES[name].get("restart") != "unless-stopped"} == set()
    migrate = SERVICES["migrate"]
    assert "migrate" in migrate["command"] and migrate.get("restart", "no") == "no"
    for name in set(APP) - {"migrate"}:
        assert SERVICES[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}, name
        assert "migrate" not in str(SERVICES[name].get("command", "")), f"{name} must not migrate at each start"
    assert SERVICES["gpu-worker"]["profiles"] == ["gpu"]
    assert [name for name, s in SERVICES.items() if "nvidia" in str(s) and s.get("profiles") != ["gpu"]] == []


def test_health_checks_ask_for_liveness_and_a_real_page():
    for name, service in WORKERS.items():
        test = service["healthcheck"]["test"]
        assert test[:2] == ["CMD", "/app/scripts/docker-entrypoint.sh"] and "worker_alive" in test, name
        assert service.get("init") is True, f"{name}: PID 1 must not be the worker, or its check cannot kill it"
        assert "inspect ping" not in str(test)
    web = " ".join(SERVICES["web"]["healthcheck"]["test"])
    assert "http://127.0.0.1:8000/healthz/" in web and re.search(r"%\{http_code\}.*= 200", web), web
    assert "curl -f" not in web  # -f lets a redirect pass


def health_check(test: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [str(REPO_ROOT / arg.removeprefix("/app/")) if arg.startswith("/app/") else arg for arg in test[1:]]
    command = [sys.executable if arg == "python" else arg for arg in command]
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.slow
def test_the_worker_check_works_with_keys_the_entrypoint_generated(tmp_path):
    # The container's environment: production, keys neither in .env nor in the environment.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DJANGO_SECRET_KEY", "FACTLAB_PSEUDONYM_KEY"))}
    # The service's broker and cache addresses come from the compose file, not from wherever the suite runs
    # (production settings refuse a per-process cache); nothing connects to them while the state file is fresh.
    env |= {name: SERVICES["cpu-worker"]["environment"][name] for name in ("REDIS_URL", "CELERY_BROKER_URL")}
    env |= {"FACTLAB_PRODUCTION": "1", "FACTLAB_SECRETS_DIR": str(tmp_path / "secrets"),
            "FACTLAB_WORKER_STATE_DIR": str(tmp_path / "workers"), "DJANGO_ALLOWED_HOSTS": "localhost"}
    test = SERVICES["cpu-worker"]["healthcheck"]["test"]
    without_entrypoint = subprocess.run([sys.executable, "manage.py", "worker_alive"], cwd=REPO_ROOT, env=env,
                                        capture_output=True, text=True, timeout=120, check=False)
    assert without_entrypoint.returncode != 0 and "DJANGO_SECRET_KEY" in without_entrypoint.stderr
    no_worker = health_check(test, env)
    assert no_worker.returncode == 1 and "no worker state" in no_worker.stderr, no_worker.stderr
    write_state(tmp_path / "workers" / "celery_cpu.json",
                {"pid": os.getpid(), "time": time.time(), "queues": ["cpu"], "broker": "ok", "stuck": ""})
    alive = health_check(test, env)
    assert alive.returncode == 0 and alive.stdout.strip() == "alive", alive.stderr


def test_the_image_runs_unprivileged_and_owns_its_volumes():
    users = re.findall(r"^USER\s+(\S+)", DOCKERFILE, flags=re.MULTILINE)
    assert users and users[-1] not in {"root", "0"}
    last_user = DOCKERFILE.rindex("\nUSER ")
    assert "collectstatic" in DOCKERFILE[:last_user]  # build steps that write into /app run before it
    owned = re.search(r"chown (\S+) (.+)", DOCKERFILE)
    assert owned and owned.group(1).split(":")[0] == users[-1]
    targets = {volume.split(":")[1] for s in APP.values() for volume in s.get("volumes", [])}
    assert targets and targets <= set(owned.group(2).split()), targets
    assert re.search(r'^ENTRYPOINT \["/app/scripts/docker-entrypoint.sh"\]', DOCKERFILE, flags=re.MULTILINE)


def test_local_secrets_stay_out_of_the_build_context():
    ignored = (REPO_ROOT / ".dockerignore").read_text().split()
    assert ".env" in ignored and "**/.env" in ignored and ".venv" in ignored
