"""Shared parts of the load and fault benchmarks: a benchmark database, gunicorn, simulated annotators,
and the invariants checked in the database afterwards.

Everything runs on loopback (PostgreSQL and Redis on 127.0.0.1, gunicorn on 127.0.0.1); every loop is
bounded by a deadline and every process started here is stopped here.
"""
from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import random
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

REPO_ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
SLUG = "bench-frank"
PASSWORD = "bench-annotator-pass"
TASK_DATA = re.compile(r'<script id="task-data" type="application/json">(.*?)</script>', re.DOTALL)
# The task page's keep-alive (static/factlab/heartbeat.js): where it posts and how often.
HEARTBEAT = re.compile(r'id="heartbeat" data-url="([^"]+)" data-seconds="(\d+)"')
# The "submitted" page's link to the next item (templates/annotate/done.html).
NEXT_ITEM = re.compile(r'id="next-item" href="([^"]+)"')


def reference_loop_ms(repeat: int = 5) -> float:
    """Median milliseconds of a fixed pure-Python loop (summing 10 million integers) on one core.

    Printed beside load figures so that runs on different machines can be compared: the load test's
    throughput is bound by CPU, and this loop took 157-313 ms (median about 180) on the 2-core machine
    of the load figures in docs/guarantees.md.
    """
    times = []
    for _ in range(repeat):
        started = time.process_time()
        sum(range(10_000_000))
        times.append(time.process_time() - started)
    return round(1000 * statistics.median(times), 1)


def redis_port() -> int:
    """Port of the Redis the benchmark uses: the one in the caller's ``REDIS_URL`` (so that runs side by side
    keep their counters apart), else 6379."""
    from urllib.parse import urlsplit

    return urlsplit(os.environ.get("REDIS_URL", "")).port or 6379


def default_frank_dir() -> Path:
    shared = REPO_ROOT.parent / "shared" / "data" / "frank"
    return shared if (shared / "human_annotations.json").is_file() else REPO_ROOT / "data" / "frank-subset"


def cache_db(redis_db: int) -> int:
    """The Redis db of the benchmark site's cache (sessions, rate-limit counters, the answers and figures the site
    keeps): the one after ``redis_db``, named explicitly in :func:`bench_env` and emptied with it by
    :func:`flush_redis`, so that no run starts from what an earlier run kept under the same keys (a reused seed
    gives every run the same ids)."""
    return redis_db + 1


def bench_env(*, database: str, redis_db: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment of the site under test: its own database and Redis dbs, rate limits raised, no debug."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "FACTLAB_", "CELERY_", "PYTEST_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="factlab.settings",
        DATABASE_URL=f"postgres://postgres@{HOST}:5432/{database}",
        REDIS_URL=f"redis://{HOST}:{redis_port()}/{redis_db}",
        FACTLAB_CACHE_URL=f"redis://{HOST}:{redis_port()}/{cache_db(redis_db)}",
        DJANGO_DEBUG="0",
        # Plain HTTP on 127.0.0.1: not production mode (gunicorn.conf.py would turn it on), a throwaway key.
        FACTLAB_PRODUCTION="0",
        DJANGO_SECRET_KEY="bench-" + secrets.token_urlsafe(48),
        DJANGO_ALLOWED_HOSTS=f"{HOST},localhost",
        # The limiter stays on (its Redis round trips are part of the cost) with rates no simulated user reaches.
        FACTLAB_RATELIMIT_LOGIN="1000000/m",
        FACTLAB_RATELIMIT_SUBMIT="1000000/m",
        FACTLAB_LOG_LEVEL="ERROR",
        PYTHONUNBUFFERED="1",
        PYTHONWARNINGS="ignore:No directory at",  # whitenoise: no collectstatic for a benchmark
    )
    env.update(extra or {})
    return env


def use_env_here(env: dict[str, str]) -> None:
    """Point this process's Django at the benchmark database (before ``django.setup()``)."""
    for key, value in env.items():
        if key in ("DATABASE_URL", "REDIS_URL") or key.startswith(("DJANGO_", "FACTLAB_", "CELERY_")):
            os.environ[key] = value
    os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")  # the load test sends no task; the fault test says so
    sys.path.insert(0, str(REPO_ROOT))
    import django

    django.setup()


def recreate_database(name: str) -> None:
    """Drop and create the benchmark database (never the project's or the tests' one)."""
    assert name.startswith("factlab_bench"), "the benchmark only ever recreates factlab_bench* databases"
    with _admin_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def seed_fingerprint(frank_dir: Path, users: int, redundancy: int, documents: int | None) -> str:
    """What a seeded database depends on: the data, the seed's parameters, the migrations and the app's code."""
    import hashlib

    digest = hashlib.sha256(f"{Path(frank_dir).resolve()}|{users}|{redundancy}|{documents}".encode())
    digest.update(inspect.getsource(seed).encode())
    for path in sorted(REPO_ROOT.glob("*/migrations/*.py")) + sorted(Path(frank_dir).glob("*.json")):
        digest.update(path.name.encode())
        digest.update(str(path.stat().st_size).encode())
    # The prepared pages in the seed are stale once the code behind them changes (annotate.frank.prepared
    # hashes its sources): any change to the app's code makes a new seed.
    for path in sorted(REPO_ROOT.glob("annotate/**/*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _admin_connection():
    import psycopg

    return psycopg.connect(f"postgresql://postgres@{HOST}:5432/postgres", autocommit=True)


def _seed_marker(database: str) -> str | None:
    """The seed's setup (sessions included) kept in the seeded database, or None when it has none."""
    import psycopg

    try:
        with psycopg.connect(f"postgresql://postgres@{HOST}:5432/{database}") as conn:
            row = conn.execute("SELECT setup FROM bench_seed_marker").fetchone()
    except psycopg.Error:
        return None
    return row[0] if row else None


def save_seeded_template(database: str, template: str, fingerprint: str, setup: dict) -> None:
    """Keep a copy of the freshly seeded database as ``template`` for later runs with ``--reuse-seed``."""
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(f"postgresql://postgres@{HOST}:5432/{database}", autocommit=True) as conn:
        conn.execute("CREATE TABLE bench_seed_marker (fingerprint text, setup text)")
        conn.execute("INSERT INTO bench_seed_marker VALUES (%s, %s)", (fingerprint, json.dumps(setup)))
    with _admin_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{template}" TEMPLATE "{database}"')


def clone_seeded_template(template: str, database: str, fingerprint: str) -> bool:
    """Recreate ``database`` as a copy of ``template`` when the template was seeded with the same
    fingerprint (seconds instead of minutes of import and page preparation); False otherwise."""
    import psycopg

    assert database.startswith("factlab_bench") and template.startswith("factlab_bench")
    try:
        with psycopg.connect(f"postgresql://postgres@{HOST}:5432/{template}") as conn:
            row = conn.execute("SELECT fingerprint FROM bench_seed_marker").fetchone()
    except psycopg.Error:
        return False
    if not row or row[0] != fingerprint:
        return False
    _recreate_from(template, database)
    return True


def _recreate_from(template: str, database: str) -> None:
    """Drop ``database`` (connections included) and create it again as a copy of ``template``."""
    with _admin_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}" TEMPLATE "{template}"')


def copy_seed(database: str, copy: str) -> bool:
    """Recreate ``copy`` from the seed that ``load_test.py --reuse-seed`` keeps for ``database``
    (``<database>_seed``: the imported campaign before any load ran on it); False when there is none."""
    template = f"{database}_seed"
    assert copy.startswith("factlab_bench") and copy not in (database, template)
    with _admin_connection() as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template]).fetchone() is None:
            return False
    _recreate_from(template, copy)
    return True


def drop_copy(copy: str) -> None:
    """Drop a database :func:`copy_seed` made."""
    assert copy.startswith("factlab_bench") and not copy.endswith("_seed")
    with _admin_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{copy}" WITH (FORCE)')


def flush_redis(db: int, *, with_cache: bool = False) -> None:
    """Empty Redis db ``db`` (and, ``with_cache``, the site's cache db after it: :func:`cache_db`)."""
    import redis

    for number in (db, cache_db(db)) if with_cache else (db,):
        client = redis.Redis(host=HOST, port=redis_port(), db=number)
        client.flushdb()
        client.close()


def seed(*, frank_dir: Path, users: int, redundancy: int, documents: int | None) -> dict:
    """Migrate, import FRANK into a running campaign, and create ``users`` pre-qualified annotators.

    Returns counts for the report. Runs in this process (Django must be set up on the benchmark database).
    """
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command

    from annotate.models import (
        Campaign,
        CampaignStatus,
        Item,
        Participation,
        QualificationStatus,
        Worker,
    )
    from annotate.services.imports import import_dataset

    call_command("migrate", verbosity=0, interactive=False)
    started = time.monotonic()
    import_dataset("frank", [frank_dir], campaign_slug=SLUG, campaign_kind="frank", campaign_name="Benchmark FRANK")
    campaign = Campaign.objects.get(slug=SLUG)
    # Pages are prepared here as a worker would after the import (where Celery is eager this finds them
    # done; where the job went to a broker nobody consumes, e.g. the fault benchmark's, it does the work):
    # the load then measures the steady state, not spaCy in the first request for each document.
    from annotate.frank.prepared import prepare_campaign

    prepared_now = prepare_campaign(campaign)
    if documents:
        keep = list(campaign.items.order_by("position", "id").values_list("id", flat=True)[:documents])
        Item.objects.filter(campaign=campaign).exclude(id__in=keep).delete()
    # FRANK's rules, except that simulated annotators are never blocked for their (random) answers on traps
    # and gold, nor held for their speed (they answer in a fraction of a second): every rule is still computed.
    Campaign.objects.filter(pk=campaign.pk).update(
        status=CampaignStatus.RUNNING, redundancy=redundancy, trap_block_threshold=0.0, control_block_threshold=0.0,
        min_seconds_per_sentence=0.0, assignment_timeout_minutes=30,
    )
    # One hash for every account: hashing 200 passwords one by one would dominate the setup time.
    hashed = make_password(PASSWORD)
    User = get_user_model()
    User.objects.bulk_create([User(username=f"bench-{i:04d}", password=hashed) for i in range(users)])
    users_by_name = dict(User.objects.filter(username__startswith="bench-").values_list("username", "id"))
    Worker.objects.bulk_create([Worker(user_id=uid) for uid in users_by_name.values()])
    Participation.objects.bulk_create(
        [Participation(worker=w, campaign=campaign, tutorial_done=True, qualification_status=QualificationStatus.PASSED)
         for w in Worker.objects.filter(user__username__startswith="bench-")]
    )
    from annotate.models import Summary

    sessions = signed_in_sessions(User.objects.filter(username__startswith="bench-").order_by("username"))
    return {"sessions": sessions, "items": campaign.items.count(), "summaries": Summary.objects.filter(document__campaign=campaign).count(),
            "users": users, "redundancy": redundancy, "pages_prepared_by_seed": prepared_now,
            "seed_seconds": round(time.monotonic() - started, 1)}


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """Options both benchmarks share: the data, the benchmark database and Redis db, the JSON output."""
    parser.add_argument("--frank-data", type=Path, default=default_frank_dir())
    parser.add_argument("--database", default="factlab_bench")
    parser.add_argument("--redis-db", type=int, default=10, help="the site's broker db; its cache uses the next one (both emptied first)")
    parser.add_argument("--json-out", type=Path, default=None, help="also write the results as JSON")
    parser.add_argument(
        "--reuse-seed", action="store_true",
        help="keep the seeded database as <database>_seed and start later runs from a copy of it (same data, "
             "users, redundancy and migrations): a run starts in seconds instead of minutes",
    )


def prepare_site(env: dict[str, str], args: argparse.Namespace, *, documents: int | None) -> tuple[dict, list[str]]:
    """Fresh benchmark database and Redis db, seeded from FRANK; returns the setup counts and the sessions.

    Django in this process is pointed at the benchmark database and its connections are closed at the
    end, so the server under test gets the database to itself.
    """
    flush_redis(args.redis_db, with_cache=True)
    fingerprint = seed_fingerprint(args.frank_data, args.users, args.redundancy, documents)
    template = f"{args.database}_seed"
    if getattr(args, "reuse_seed", False) and clone_seeded_template(template, args.database, fingerprint):
        setup = json.loads(_seed_marker(args.database) or "{}")
        # The sessions were signed with the seeding run's key: the server under test must use it too.
        env["DJANGO_SECRET_KEY"] = setup.pop("secret_key")
        use_env_here(env)
        setup["seed_seconds"] = 0.0
        setup["reused_seed"] = template
    else:
        recreate_database(args.database)
        use_env_here(env)
        setup = seed(frank_dir=args.frank_data, users=args.users, redundancy=args.redundancy, documents=documents)
        if getattr(args, "reuse_seed", False):
            save_seeded_template(args.database, template, fingerprint, {**setup, "secret_key": env["DJANGO_SECRET_KEY"]})
    sessions = setup.pop("sessions")
    print(f"seeded: {setup}", flush=True)
    from django.db import connections

    connections.close_all()
    return setup, sessions


def write_json_out(path: Path | None, results: dict) -> None:
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2))


def signed_in_sessions(users) -> list[str]:
    """A signed-in session per user, as the login view would create it (keys in ``users`` order).

    Signing 200 annotators in through the form would spend a minute of both CPUs on password hashing
    (PBKDF2) before any work; the login view itself is measured by the rate-limit tests, not here.
    """
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    SessionStore = import_module(settings.SESSION_ENGINE).SessionStore

    keys = []
    for user in users:
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "annotate.auth_backend.WorkerAwareBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        keys.append(session.session_key)
    return keys


# --------------------------------------------------------------------------- gunicorn


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Gunicorn:
    """gunicorn (``benchmarks.wsgi_warm``, preloaded, gthread workers) on 127.0.0.1; stopped on exit whatever happens."""

    def __init__(
        self, env: dict[str, str], *, port: int, workers: int, threads: int, log_path: Path, worker_class: str = "gthread",
        keep_alive: int = 2,
    ):
        self.env, self.port, self.workers, self.threads, self.log_path = env, port, workers, threads, log_path
        self.worker_class, self.keep_alive = worker_class, keep_alive
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> Self:
        command = [
            sys.executable, "-m", "gunicorn", "benchmarks.wsgi_warm:application", "--preload", "--bind", f"{HOST}:{self.port}",
            "--workers", str(self.workers), "--worker-class", self.worker_class,
            *(["--threads", str(self.threads)] if self.worker_class == "gthread" else []), "--keep-alive", str(self.keep_alive),
            "--timeout", "60", "--graceful-timeout", "5", "--backlog", "2048", "--log-level", "warning",
        ]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, cwd=REPO_ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}:\n{self.log_path.read_text()[-3000:]}")
            try:
                with socket.create_connection((HOST, self.port), timeout=1):
                    pass
                if len(self.worker_pids()) >= self.workers:
                    return self
            except OSError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("gunicorn did not start in time")

    def worker_pids(self) -> list[int]:
        import psutil

        if self.process is None:
            return []
        try:
            return sorted(child.pid for child in psutil.Process(self.process.pid).children())
        except psutil.NoSuchProcess:
            return []

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def worker_memory_mb(server: Gunicorn) -> dict[str, float]:
    """Median memory of the server's workers, in MB: unique (USS, pages no other process shares) and proportional
    (PSS, shared pages split among their sharers). Read after the load: a worker's collector that walked the heap
    the master loaded would have copied its pages by then."""
    import statistics

    import psutil

    unique, proportional = [], []
    for pid in server.worker_pids():
        try:
            info = psutil.Process(pid).memory_full_info()
        except psutil.Error:  # ended meanwhile
            continue
        unique.append(info.uss / 2**20)
        proportional.append(info.pss / 2**20)
    if not unique:
        return {"uss": 0.0, "pss": 0.0}
    return {"uss": round(statistics.median(unique), 1), "pss": round(statistics.median(proportional), 1)}


class CpuMeter:
    """CPU seconds used during a run by the web server's workers, PostgreSQL's processes and this process
    (the simulated annotators): what one item cycle costs, and so how many the machine's cores allow.

    With ``database``, PostgreSQL's share is that of the server processes connected to it (sampled every
    ``interval`` seconds, so that a connection closed during the run still counts up to its last sample):
    on a machine shared with other work, every PostgreSQL process's time is mostly other people's queries."""

    def __init__(self, server: Gunicorn, database: str | None = None, interval: float = 0.5):
        self.server, self.database, self.interval = server, database, interval
        self._backends: dict[int, list[float]] = {}  # pid -> [CPU at first sight (0 if started in the run), latest]
        self._stop = None

    @staticmethod
    def _cpu(processes) -> float:
        import psutil

        total = 0.0
        for process in processes:
            try:
                times = process.cpu_times()
                total += times.user + times.system
            except psutil.Error:  # ended meanwhile
                pass
        return total

    def _postgres(self) -> list:
        import psutil

        found = []
        for process in psutil.process_iter(["name", "cmdline"]):
            if not (process.info["name"] or "").startswith("postgres"):
                continue
            if self.database is None or f" {self.database} " in " ".join(process.info["cmdline"] or []) + " ":
                found.append(process)
        return found

    def _sample_backends(self, *, first: bool = False) -> None:
        for process in self._postgres():
            cpu = self._cpu([process])
            seen = self._backends.setdefault(process.pid, [cpu if first else 0.0, cpu])
            seen[1] = max(seen[1], cpu)

    def _sample(self) -> dict[str, float]:
        import psutil

        workers = [psutil.Process(pid) for pid in self.server.worker_pids()]
        if self.database is None:
            postgres = self._cpu(self._postgres())
        else:
            self._sample_backends()
            postgres = sum(last - first for first, last in self._backends.values())
        return {"web_workers": self._cpu(workers), "postgres": postgres, "load_generator": self._cpu([psutil.Process()])}

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample_backends()

    def __enter__(self) -> Self:
        import threading

        if self.database is not None:
            self._sample_backends(first=True)
            self._stop = threading.Event()
            self._watcher = threading.Thread(target=self._watch, daemon=True)
            self._watcher.start()
        self.start = self._sample()
        self.started = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        end = self._sample()
        if self._stop is not None:
            self._stop.set()
            self._watcher.join(timeout=5)
        self.wall = time.monotonic() - self.started
        self.used = {k: round(end[k] - self.start[k], 2) for k in end}

    def per_cycle_ms(self, cycles: int) -> dict[str, float]:
        """Milliseconds of CPU per item cycle, by part, and the cycles per second the cores would allow."""
        result = {k: round(1000 * v / max(cycles, 1), 1) for k, v in self.used.items()}
        total = sum(self.used.values()) / max(cycles, 1)
        result["total"] = round(1000 * total, 1)
        result["cores"] = os.cpu_count() or 1
        result["cycles_per_s_if_cpu_bound"] = round((os.cpu_count() or 1) / total, 1) if total else None
        return result


# --------------------------------------------------------------------------- simulated annotators


@dataclass
class Stats:
    submit_latencies: list[float] = field(default_factory=list)
    task_latencies: list[float] = field(default_factory=list)
    done_latencies: list[float] = field(default_factory=list)  # the page after a submit (``as_browser``)
    next_item_latencies: list[float] = field(default_factory=list)  # its link to the next item, a redirect (``as_browser``)
    heartbeat_latencies: list[float] = field(default_factory=list)  # the open page's keep-alive (``as_browser``)
    acknowledged: dict[int, str] = field(default_factory=dict)  # assignment id -> submission key
    duplicates_acknowledged: int = 0
    retries: int = 0
    errors: Counter = field(default_factory=Counter)
    blocked: int = 0
    out_of_work: int = 0
    reading_at_end: int = 0  # annotators whose reading the run's end cut short (``as_browser``): not submitted
    logged_in: int = 0


def choose_entity(data: dict) -> int:
    """Answer the reading check as a careful reader: the option that does not occur in the article."""
    article = " ".join(data["article"]).lower()
    absent = [i for i, option in enumerate(data["entity_options"]) if option.lower() not in article]
    return absent[0] if absent else 0


def answers_for_page(data: dict, rng: random.Random) -> list[dict]:
    """One answer per sentence shown (a simulated judgement: mostly "yes", sometimes an entity error)."""
    rows = []
    for summary in data["summaries"]:
        answers = []
        for _ in summary["sentences"]:
            if rng.random() < 0.8:
                answers.append({"factual": True, "categories": [], "seconds": round(rng.uniform(2, 12), 1)})
            else:
                answers.append({"factual": False, "categories": ["EntE"], "seconds": round(rng.uniform(4, 20), 1)})
        rows.append({"answers": answers})
    return rows


class ConnectionLost(Exception):
    """The server closed the connection or did not answer (a killed worker): the request may or may not have run."""


@dataclass
class Response:
    """What the simulated annotator keeps of an HTTP answer (the body is read before the connection is reused)."""

    status_code: int
    text: str

    def json(self):
        return json.loads(self.text)


# The driver shares the 2 cores with the server it measures, so it uses aiohttp: about a quarter of the CPU
# per item cycle that httpx took on this machine (4.2 vs 16-18 ms), which leaves more to the server under test.
CLIENT_KEEPALIVE_S = 1.5  # below gunicorn's --keep-alive 2: the client never reuses a connection the server is closing


async def _request(client, method: str, url: str, **kwargs) -> Response:
    import aiohttp

    try:
        async with client.request(method, url, allow_redirects=False, **kwargs) as response:
            return Response(response.status, await response.text())
    except (TimeoutError, aiohttp.ClientError) as exc:
        raise ConnectionLost(type(exc).__name__) from exc


async def annotator(
    i: int, session_key: str, base: str, deadline: float, stats: Stats, *, think: float, double_click: float, retries: int, seed: int,
    think_min: float = 0.0, stagger: float = 0.0, as_browser: bool = False,
) -> None:
    """One simulated annotator (signed in with ``session_key``): take items until the deadline, the end of the work, or a block.

    Between items it pauses between ``think_min`` and ``think`` seconds; it starts after up to ``stagger``
    seconds, so that annotators who read for a minute do not all ask for their first item at once.

    ``as_browser``: every request the task page's browser makes, not only the page and the submit. The page's
    keep-alive posts once when the page opens and then every interval the page names while the annotator reads
    (the pause comes before the submit, with the page open), and after the submit the browser opens the page the
    answer names (``next``: the "submitted, go on or finish" page) and follows its link to the next item (the
    campaign's entry, which redirects to the task page)."""
    import aiohttp
    from yarl import URL

    rng = random.Random(seed * 1000 + i)
    jar = aiohttp.CookieJar(unsafe=True)  # cookies for 127.0.0.1 (an IP address) are kept only when "unsafe"
    jar.update_cookies({"sessionid": session_key}, URL(base))
    connector = aiohttp.TCPConnector(limit=2, keepalive_timeout=CLIENT_KEEPALIVE_S)
    async with aiohttp.ClientSession(
        base_url=base, cookie_jar=jar, connector=connector, timeout=aiohttp.ClientTimeout(total=30.0)
    ) as client:
        stats.logged_in += 1
        if stagger:
            await asyncio.sleep(min(rng.uniform(0, stagger), max(0.0, deadline - time.monotonic())))
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                page = await _request(client, "GET", f"/c/{SLUG}/frank/task/")
            except ConnectionLost as exc:
                stats.errors[f"task page: {exc}"] += 1
                await asyncio.sleep(0.5)
                continue
            stats.task_latencies.append(time.perf_counter() - started)
            if page.status_code != 200:
                stats.errors[f"task page: HTTP {page.status_code}"] += 1
                if page.status_code in (302, 403):
                    stats.blocked += 1
                    return
                await asyncio.sleep(0.5)
                continue
            match = TASK_DATA.search(page.text)
            if match is None:
                stats.out_of_work += 1  # "No more articles"
                return
            data = json.loads(match.group(1))
            csrf = jar.filter_cookies(URL(base)).get("csrftoken")
            headers = {"X-CSRFToken": csrf.value if csrf else "", "Content-Type": "application/json"}
            urls = data["urls"]
            # As the page does: the reading check's answer goes with the item's answers.
            submission = {"submission_key": data["submission_key"], "summaries": answers_for_page(data, rng)}
            if not data["entity_done"]:
                submission["entity_choice"] = choose_entity(data)
            body = json.dumps(submission)
            if as_browser and not await _read_with_page_open(client, page.text, headers, rng.uniform(think_min, think) if think else 0.0, deadline, stats):
                # The run ended while this annotator read: the page stays open, unsubmitted, as a reader's would.
                # (Submitting at the deadline would send every reader's answers in the same instant, a burst
                # that no study sees and that the latencies would then report.)
                stats.reading_at_end += 1
                return

            async def submit_once(url: str = urls["submit"], body: str = body, headers: dict = headers):
                started = time.perf_counter()
                response = await _request(client, "POST", url, data=body, headers=headers)
                stats.submit_latencies.append(time.perf_counter() - started)
                return response

            for attempt in range(1 + retries):
                # A double click sends the same submission twice at once; a lost connection is retried
                # with the same key, as the page does. Either way one annotation must be stored.
                n = 2 if attempt == 0 and rng.random() < double_click else 1
                outcomes = await asyncio.gather(*(submit_once() for _ in range(n)), return_exceptions=True)
                for outcome in outcomes:
                    if isinstance(outcome, BaseException) and not isinstance(outcome, ConnectionLost):
                        raise outcome
                lost = [o for o in outcomes if isinstance(o, ConnectionLost)]
                answered = [o for o in outcomes if not isinstance(o, BaseException)]
                accepted = [o.json() for o in answered if o.status_code == 200 and o.json().get("ok")]
                for outcome in lost:
                    stats.errors[f"submit: {outcome}"] += 1
                for response in answered:
                    if response.status_code != 200:
                        stats.errors[f"submit: HTTP {response.status_code}"] += 1
                if accepted:
                    stats.acknowledged[data["assignment"]] = data["submission_key"]
                    stats.duplicates_acknowledged += sum(bool(a["duplicate"]) for a in accepted)
                    if as_browser:
                        done = await _timed_get(client, accepted[0]["next"], "page after submit", stats.done_latencies, stats)
                        link = NEXT_ITEM.search(done.text) if done is not None else None
                        if link is not None:
                            await _timed_get(client, link.group(1), "next-item link", stats.next_item_latencies, stats, expect=302)
                    break
                if not lost:
                    break  # refused with a message: retrying would not help
                stats.retries += 1
                await asyncio.sleep(0.2)
            if think and not as_browser:
                await asyncio.sleep(min(rng.uniform(think_min, think), max(0.0, deadline - time.monotonic())))


async def _timed_get(client, url: str, what: str, latencies: list[float], stats: Stats, *, expect: int = 200) -> Response | None:
    started = time.perf_counter()
    try:
        answer = await _request(client, "GET", url)
    except ConnectionLost as exc:
        stats.errors[f"{what}: {exc}"] += 1
        return None
    latencies.append(time.perf_counter() - started)
    if answer.status_code != expect:
        stats.errors[f"{what}: HTTP {answer.status_code}"] += 1
    return answer


async def _read_with_page_open(client, page_html: str, headers: dict, seconds: float, deadline: float, stats: Stats) -> bool:
    """``seconds`` of reading with the task page open: its keep-alive posts at once, then every interval it names.
    False when the run's deadline came first (the reading was not finished)."""
    found = HEARTBEAT.search(page_html)
    read_until = time.monotonic() + seconds
    finished, until = read_until <= deadline, min(read_until, deadline)
    while True:
        if found is not None:
            started = time.perf_counter()
            try:
                answer = await _request(client, "POST", found.group(1), headers={"X-CSRFToken": headers["X-CSRFToken"]})
                stats.heartbeat_latencies.append(time.perf_counter() - started)
                if answer.status_code != 204:  # 204: the item stays this page's
                    stats.errors[f"heartbeat: HTTP {answer.status_code}"] += 1
            except ConnectionLost as exc:
                stats.errors[f"heartbeat: {exc}"] += 1
        left = until - time.monotonic()
        if left <= 0:
            return finished
        await asyncio.sleep(min(left, float(found.group(2))) if found is not None else left)
        if found is None or time.monotonic() >= until:
            return finished


async def run_annotators(base: str, sessions: list[str], duration: float, **kwargs) -> Stats:
    stats = Stats()
    deadline = time.monotonic() + duration
    await asyncio.gather(*(annotator(i, key, base, deadline, stats, **kwargs) for i, key in enumerate(sessions)))
    return stats


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def latency_summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(1000 * percentile(values, 50), 1),
        "p95_ms": round(1000 * percentile(values, 95), 1),
        "p99_ms": round(1000 * percentile(values, 99), 1),
        "mean_ms": round(1000 * statistics.fmean(values), 1) if values else float("nan"),
    }


# --------------------------------------------------------------------------- invariants


def check_invariants(stats: Stats) -> dict:
    """What the database says about the run; ``ok`` is False when a guarantee was broken."""
    from django.db.models import Count, Q, Sum

    from annotate.models import (
        LIVE_ASSIGNMENT_STATUSES,
        Assignment,
        AssignmentStatus,
        BonusEntry,
        Campaign,
        SentenceJudgement,
    )

    campaign = Campaign.objects.get(slug=SLUG)
    acknowledged = stats.acknowledged
    rows = {a.pk: a for a in Assignment.objects.filter(pk__in=list(acknowledged))}
    judgements = dict(
        SentenceJudgement.objects.filter(assignment_id__in=list(acknowledged)).values("assignment_id").annotate(n=Count("id")).values_list("assignment_id", "n")
    )
    missing, wrong_key, wrong_count = [], [], []
    for pk, key in acknowledged.items():
        assignment = rows.get(pk)
        if assignment is None or assignment.status != AssignmentStatus.SUBMITTED:
            missing.append(pk)
            continue
        if assignment.submission_key != key:
            wrong_key.append(pk)
        expected = sum(spec["sentences"] for spec in assignment.layout["summaries"])  # trap answers are kept apart
        if judgements.get(pk, 0) != expected:
            wrong_count.append(pk)
    duplicate_judgements = (
        SentenceJudgement.objects.filter(summary__document__campaign=campaign).values("summary_id", "sentence_index", "worker_id")
        .annotate(n=Count("id")).filter(n__gt=1).count()
    )
    over = (
        campaign.items.annotate(live=Count("assignments", filter=Q(assignments__status__in=LIVE_ASSIGNMENT_STATUSES)))
        .filter(live__gt=campaign.redundancy).count()
    )
    twice = Assignment.objects.filter(item__campaign=campaign).values("item_id", "worker_id").annotate(n=Count("id")).filter(n__gt=1).count()
    submitted = Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.SUBMITTED).count()
    pay_entries = BonusEntry.objects.filter(campaign=campaign, key__startswith="pay:").count()
    duplicate_keys = BonusEntry.objects.values("key").annotate(n=Count("id")).filter(n__gt=1).count()
    item_bonus = BonusEntry.objects.filter(campaign=campaign, key__startswith="item-bonus:").values("assignment_id").annotate(n=Count("id")).filter(n__gt=1).count()
    result = {
        "acknowledged": len(acknowledged),
        "acknowledged_missing_in_db": len(missing),
        "acknowledged_with_other_key": len(wrong_key),
        "acknowledged_with_wrong_row_count": len(wrong_count),
        "stored_not_acknowledged": submitted - len(acknowledged),
        "duplicate_judgements": duplicate_judgements,
        "items_over_redundancy": over,
        "item_worker_twice": twice,
        "submitted_in_db": submitted,
        "judgements_in_db": SentenceJudgement.objects.filter(summary__document__campaign=campaign).count(),
        "pay_entries": pay_entries if campaign.pay_per_item else None,
        "duplicate_ledger_keys": duplicate_keys,
        "assignments_with_two_item_bonuses": item_bonus,
        "ledger_total": str(BonusEntry.objects.filter(campaign=campaign).aggregate(t=Sum("amount"))["t"] or 0),
    }
    result["ok"] = not (missing or wrong_key or wrong_count or duplicate_judgements or over or twice or duplicate_keys or item_bonus) and submitted >= len(acknowledged)
    return result

