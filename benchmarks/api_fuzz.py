"""Stateful fuzzing of the REST API against its OpenAPI schema, as an admin or a researcher, over HTTP.

The suite's in-process run (``tests/integration/test_schema_fuzz.py``) gives each operation a few examples; this script
is the long run: a seeded server (gunicorn, not in debug mode) on a fresh PostgreSQL database, and
schemathesis' four phases (examples, coverage, fuzzing, and the stateful phase that chains the API's links:
create a campaign, then patch, import into, export and report it) for a time budget. Jobs the API starts
are queued on a Redis database no worker reads, so the run measures the web tier only.

Usage (PostgreSQL and Redis on 127.0.0.1, as for the suite)::

    .venv/bin/python benchmarks/api_fuzz.py --role admin --minutes 10
    .venv/bin/python benchmarks/api_fuzz.py --role researcher --minutes 10

It prints the number of test cases and requests, server errors, and failures of each check. Conformance
checks (the answer has a documented status code, content type, headers and body) must find nothing; the two
data checks of schemathesis (a request valid by the schema accepted, an invalid one refused) are printed
apart: a valid request about something that does not exist (404) or that conflicts with the current state
(409) is refused by design.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable

CONFORMANCE = [
    "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_headers_conformance",
    "response_schema_conformance",
]
DATA_CHECKS = ["positive_data_acceptance", "negative_data_rejection"]
REFUSALS = ["400", "401", "403", "404", "405", "406", "409", "413", "414", "415", "422", "428", "429"]
#: The token's DELETE would turn the rest of the run into 401s.
EXCLUDED = ["--exclude-path", "/api/auth/token/", "--exclude-method", "DELETE"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fresh_database(base_url: str, name: str) -> str:
    import psycopg

    admin = base_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return base_url.rsplit("/", 1)[0] + f"/{name}"


def manage(env: dict, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run([PY, "manage.py", *args], cwd=REPO, env=env, input=stdin, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


SEED = """
import json, os, secrets; os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
import django; django.setup()
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from annotate.models import Campaign, Document, ImportJob, Item, PagePreparation, Participation, Summary, Worker
from annotate.services.page_preparations import queue_page_preparation
from annotate.services.researchers import create_researcher
from metrics_service.models import ScoringJob
from metrics_service.scoring.jobs import submit_scoring_job
User = get_user_model()
admin = User.objects.create_user("fuzz-admin", password=None, is_staff=True, is_superuser=True)
slugs = list(Campaign.objects.values_list("slug", flat=True))
researcher = create_researcher("fuzz-researcher", password=secrets.token_urlsafe(16), campaigns=slugs)  # active at once
# A queued page preparation and scoring job (no worker reads their queue): their cancel and retry are reachable.
frank = Campaign.objects.get(slug="frank-demo")
queue_page_preparation(frank)
submit_scoring_job(metric="rouge", campaign=frank, user=admin)
ids = set()
for model in (Document, Item, Summary, Participation, Worker, ImportJob, PagePreparation, ScoringJob):
    ids.update(model.objects.order_by("pk").values_list("pk", flat=True)[:20])
print(json.dumps({"admin": Token.objects.create(user=admin).key, "researcher": Token.objects.create(user=researcher).key,
                  "slugs": slugs, "ids": sorted(ids)}))
"""


def seed(env: dict) -> dict:
    """Migrate, seed the FRANK and BUMP demo campaigns, and create the two accounts; returns their tokens and
    the slugs and object ids the fuzzer should aim at (random ones would mostly meet 404s)."""
    manage(env, "migrate", "--noinput")
    manage(env, "collectstatic", "--noinput")
    manage(env, "setup_demo", "--frank-data", str(REPO / "data" / "frank-subset"), "--no-progress")
    manage(env, "setup_bump_demo")
    done = subprocess.run([PY, "-c", SEED], cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"creating the fuzzing accounts failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def config_file(seeded: dict, path: Path) -> Path:
    """schemathesis.toml: most path slugs and ids drawn from the seeded data, the rest generated."""
    path.write_text(
        "[dictionaries.slugs]\nvalues = " + json.dumps(seeded["slugs"]) + "\n"
        "[dictionaries.ids]\nvalues = " + json.dumps(seeded["ids"]) + "\n"
        "[parameters]\n"
        '"path.slug" = { dictionary = "slugs", probability = 0.9 }\n'
        '"path.id" = { dictionary = "ids", probability = 0.8 }\n'
        # A request line beyond gunicorn's limit is refused by the web server (414), before Django reads it.
        "[checks.negative_data_rejection]\nexpected-statuses = " + json.dumps(REFUSALS) + "\n"
    )
    return path


def wait_until_up(url: str, server: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"the server exited ({server.returncode})")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    sys.exit("the server did not answer within a minute")


#: schemathesis' failure types of its two data checks; every other failure type is a conformance failure.
DATA_FAILURES = {"RejectedPositiveData": "valid by the schema, refused", "AcceptedNegativeData": "invalid by the schema, accepted"}


def summarise(run_report: Path, events: Path) -> dict:
    """Counts from schemathesis' JSON run report, and the status codes answered from its event stream."""
    report = json.loads(run_report.read_text())
    statuses: Counter[int] = Counter()
    for line in events.read_text().splitlines():
        for match in re.finditer(r'"status_code":\s*(\d{3})', line):
            statuses[int(match.group(1))] += 1
    failures = [{"type": f["type"], "title": f["title"], "count": f["count"], "operations": f["operations"]} for f in report["failures"]]
    return {
        "cases": report["test_cases"]["generated"], "seconds": report["running_time"], "stop": report["stop_reason"],
        "operations": report["operations"]["tested"], "errors": report["errors"], "failures": failures,
        "statuses": dict(sorted(statuses.items())), "untested": report["warnings"].get("missing_test_data", []),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--role", choices=("admin", "researcher"), required=True)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    args = parser.parse_args()

    base_db = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/factlab")
    redis = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0").rsplit("/", 1)[0] + "/11"
    media = Path(tempfile.mkdtemp(prefix="factlab-fuzz-media-"))
    env = {
        **os.environ, "DATABASE_URL": fresh_database(base_db, f"factlab_fuzz_{args.role}"), "REDIS_URL": redis,
        "FACTLAB_MEDIA_ROOT": str(media), "FACTLAB_STATIC_ROOT": str(media / "static"), "DJANGO_DEBUG": "", "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50), "FACTLAB_PSEUDONYM_KEY": secrets.token_urlsafe(32),
        "FACTLAB_PREPARE_PAGES_AFTER_IMPORT": "0", "FACTLAB_PRODUCTION": "0", "FACTLAB_LOG_LEVEL": "ERROR",  # plain HTTP on 127.0.0.1; refusals are expected
    }
    started = time.monotonic()
    seeded = seed(env)
    token = seeded[args.role]
    print(f"seeded in {time.monotonic() - started:.0f} s")
    port = free_port()
    out = Path(tempfile.mkdtemp(prefix="factlab-fuzz-"))
    server_log = (out / "server.log").open("w")
    server = subprocess.Popen(
        [PY, "-m", "gunicorn", "factlab.wsgi", "-b", f"127.0.0.1:{port}", "-w", str(args.workers), "--timeout", "120",
         "--log-level", "warning"], cwd=REPO, env=env, stdout=server_log, stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_up(f"{base}/healthz/", server)
        command = [
            str(Path(PY).parent / "schemathesis"), "--config-file", str(config_file(seeded, out / "schemathesis.toml")), "run", f"{base}/api/schema/?format=json",
            "--phases", "examples,coverage,fuzzing,stateful", "--max-time", str(int(args.minutes * 60)),
            "--checks", ",".join(CONFORMANCE + DATA_CHECKS), "-H", f"Authorization: Token {token}",
            "--report", "ndjson,json", "--report-ndjson-path", str(out / "events.ndjson"), "--report-json-path", str(out / "run.json"), "--continue-on-failure",
            "--request-timeout", "60", "--suppress-health-check", "all", *EXCLUDED,
        ]
        if args.seed is not None:
            command += ["--seed", str(args.seed)]
        ran = subprocess.run(command, cwd=out, capture_output=True, text=True)
        (out / "schemathesis.txt").write_text(ran.stdout + ran.stderr)
    finally:
        server.terminate()
        server.wait(30)
    if not (out / "run.json").is_file() or json.loads((out / "run.json").read_text())["operations"] is None:
        sys.exit(f"schemathesis did not run:\n{(out / 'schemathesis.txt').read_text()[-2000:]}")
    figures = summarise(out / "run.json", out / "events.ndjson")
    statuses = figures["statuses"]
    print(f"role {args.role}: {figures['seconds'] / 60:.1f} min ({figures['stop']}), {figures['operations']} operations, "
          f"{figures['cases']} test cases, {sum(statuses.values())} responses, "
          f"{sum(n for code, n in statuses.items() if code >= 500)} server errors, {len(figures['errors'])} errors")
    print("status codes:", statuses)
    conformance = [f for f in figures["failures"] if f["type"] not in DATA_FAILURES]
    print(f"conformance failures: {sum(f['count'] for f in conformance)}")
    for f in figures["failures"]:
        label = DATA_FAILURES.get(f["type"], "CONFORMANCE")
        print(f"  {f['title']} ({label}): {f['count']} in {', '.join(f['operations'])}")
    if figures["untested"]:
        print(f"operations that answered only 404: {len(figures['untested'])}")
    print(f"schemathesis output: {out / 'schemathesis.txt'}")


if __name__ == "__main__":
    main()
