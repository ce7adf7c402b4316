"""FactLab settings.

Everything that differs between a laptop, CI and production comes from the environment:

* ``DATABASE_URL`` (e.g. ``postgres://postgres@127.0.0.1:5432/factlab``) selects PostgreSQL through
  psycopg 3; without it the site runs on SQLite in the repository root.
* ``CELERY_BROKER_URL`` or ``REDIS_URL`` selects the Redis broker; without either, Celery runs tasks
  eagerly in the calling process so the site works on a bare machine.
* ``DJANGO_SECRET_KEY``, ``DJANGO_DEBUG``, ``DJANGO_ALLOWED_HOSTS`` and ``FACTLAB_PRODUCTION``
  (production mode: secure cookies, HSTS, SSL redirect; a secret key is then required).

Over 400 lines on purpose: one place for every setting, each with the reason for its default.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from factlab import queues as _queues

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


PRODUCTION = env_bool("FACTLAB_PRODUCTION", False)
# The test suite (pytest, or `manage.py test`) gets development conveniences without asking.
TESTING = "pytest" in sys.modules or sys.argv[1:2] == ["test"]
# DEBUG shows settings and tracebacks to anyone who causes an error: only `make demo` (DJANGO_DEBUG=1)
# turns it on; gunicorn, docker compose and every other process run without it.
DEBUG = env_bool("DJANGO_DEBUG", False) and not PRODUCTION

# A public development key would let anyone forge sessions and reverse export pseudonyms: outside DEBUG
# and tests the process refuses to start without a real one.
DEV_SECRET_KEY = "dev-insecure-factlab-key-do-not-use-in-production-0123456789abcdef"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if PRODUCTION or not (DEBUG or TESTING):
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY must be set (a long random string, e.g. from "
            "`python -c 'import secrets; print(secrets.token_urlsafe(64))'`); "
            "only `make demo` (DJANGO_DEBUG=1) and the tests run without one."
        )
    SECRET_KEY = DEV_SECRET_KEY
elif PRODUCTION and SECRET_KEY == DEV_SECRET_KEY:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY is the public development key; set a long random one.")

# Export pseudonyms are keyed separately, so a leaked or rotated SECRET_KEY neither reveals nor changes
# them (annotate.exporters.pseudonyms). Required in production; development derives one from SECRET_KEY.
FACTLAB_PSEUDONYM_KEY = os.environ.get("FACTLAB_PSEUDONYM_KEY", "")
if not FACTLAB_PSEUDONYM_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("FACTLAB_PSEUDONYM_KEY must be set in production (a long random string, different from DJANGO_SECRET_KEY).")
    FACTLAB_PSEUDONYM_KEY = "pseudonyms:" + SECRET_KEY
elif PRODUCTION and FACTLAB_PSEUDONYM_KEY == SECRET_KEY:
    raise ImproperlyConfigured("FACTLAB_PSEUDONYM_KEY must differ from DJANGO_SECRET_KEY.")

ALLOWED_HOSTS = [h.strip() for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

# The protocols: one installed app each, whose AppConfig (annotate.kinds.ProtocolAppConfig) registers
# its campaign kinds when it gets ready; one line adds a protocol. FACTLAB_EXTRA_PROTOCOL_APPS (comma-separated)
# installs more in this process only, e.g. one under development.
PROTOCOL_APPS = [
    "annotate.frank",
    "annotate.bump",
    "annotate.spans",
    *[a.strip() for a in os.environ.get("FACTLAB_EXTRA_PROTOCOL_APPS", "").split(",") if a.strip()],
]
if TESTING:  # the toy protocol that proves the mechanism, for the test suite only (its package says how)
    PROTOCOL_APPS.append("tests.toy_rating")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / Redoc assets served locally (no CDN)
    "django_ratelimit",  # its system check refuses a cache that is not shared (see RATELIMIT_* below)
    "annotate",
    *PROTOCOL_APPS,
    "metrics_service",
]

# Sessions signed in before the worker-aware backend keep working through the plain model backend.
AUTHENTICATION_BACKENDS = ["annotate.auth_backend.WorkerAwareBackend", "django.contrib.auth.backends.ModelBackend"]

MIDDLEWARE = [
    # /healthz/ for supervisors, before the HTTPS redirect and the host check (factlab/health.py).
    "factlab.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # 400 for NUL characters and JSON nested too deep, before any view parses the request.
    "annotate.request_limits.RequestSanityMiddleware",
    # CSP and frame rules on every page, SameSite=None for crowd workers' cookies only: outside the session and
    # CSRF middleware, so it sees the cookies they set (annotate.middleware).
    "annotate.middleware.SecurityHeadersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # 413 for a body declared above its limit, before the CSRF check or a parser reads it (annotate.upload_limits).
    "annotate.upload_limits.UploadSizeMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A crowd identity opens only the campaigns of its study links.
    "annotate.middleware.CrowdScopeMiddleware",
    # Login and submission endpoints answer 429 past their rate (annotate.ratelimits).
    "annotate.ratelimits.RateLimitMiddleware",
    # API: 400 naming a query option the endpoint does not take, instead of silently using the defaults.
    "annotate.api.query_options.StrictQueryOptionsMiddleware",
]

ROOT_URLCONF = "factlab.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "factlab.wsgi.application"
ASGI_APPLICATION = "factlab.asgi.application"

DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    # Persistent connections are checked before a request reuses them: one that PostgreSQL dropped (a restart,
    # a failover, an idle timeout) is replaced instead of answering that request with a 500.
    DATABASES = {"default": dj_database_url.parse(
        DATABASE_URL, conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")), conn_health_checks=True,
    )}
    # Django's PostgreSQL backend, whose health check sends SELECT 1 only when the socket shows the server said
    # something since the last request (factlab/postgresql/base.py): a quiet kept connection costs no round trip.
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "factlab.postgresql"
    # Parameters bound by the server instead of quoted into the SQL: the same statement text for every call, so
    # psycopg prepares it once a connection has run it prepare_threshold times, and PostgreSQL parses and plans
    # the item cycle's statements once per connection instead of on every request. DB_SERVER_SIDE_BINDING=0
    # turns it off (a pooler in transaction mode that cannot keep a connection's prepared statements).
    if os.environ.get("DB_SERVER_SIDE_BINDING", "1") != "0":
        DATABASES["default"].setdefault("OPTIONS", {}).update(server_side_binding=True, prepare_threshold=2)
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # WAL: pages read while a worker writes (the demo runs workers beside the web process).
            "OPTIONS": {"timeout": 30, "init_command": "PRAGMA journal_mode=WAL;", "transaction_mode": "IMMEDIATE"},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("FACTLAB_STATIC_ROOT", BASE_DIR / "staticfiles"))  # collectstatic writes here
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
MEDIA_ROOT = Path(os.environ.get("FACTLAB_MEDIA_ROOT", BASE_DIR / "media"))

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotate:home"
LOGOUT_REDIRECT_URL = "login"

# --- Uploads: a configurable limit, refused with a clear 413/400 above it.
FACTLAB_MAX_UPLOAD_BYTES = int(os.environ.get("FACTLAB_MAX_UPLOAD_BYTES", str(50 * 1024 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE", str(5 * 1024 * 1024)))
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# Request bodies nested deeper are refused with a 400 (annotate.request_limits); real bodies use 4 levels.
FACTLAB_MAX_JSON_DEPTH = int(os.environ.get("FACTLAB_MAX_JSON_DEPTH", "32"))

# --- Imports: limits applied while reading (annotate.importers.limits), task attempts, upload retention.
FACTLAB_IMPORT_LIMITS = {
    "max_depth": int(os.environ.get("FACTLAB_IMPORT_MAX_DEPTH", "16")),
    "max_string_chars": int(os.environ.get("FACTLAB_IMPORT_MAX_STRING_CHARS", "200000")),
    "max_file_bytes": int(os.environ.get("FACTLAB_IMPORT_MAX_FILE_BYTES", str(512 * 1024 * 1024))),
    "max_abs_number": float(os.environ.get("FACTLAB_IMPORT_MAX_ABS_NUMBER", "1e12")),
    "max_zip_members": int(os.environ.get("FACTLAB_IMPORT_MAX_ZIP_MEMBERS", "20000")),
    "max_zip_bytes": int(os.environ.get("FACTLAB_IMPORT_MAX_UNZIPPED_BYTES", str(1024 * 1024 * 1024))),
    "max_zip_ratio": float(os.environ.get("FACTLAB_IMPORT_MAX_ZIP_RATIO", "100")),
}
# Starts of one import job (a worker killed mid-import re-delivers it) before it fails for good.
FACTLAB_IMPORT_MAX_ATTEMPTS = int(os.environ.get("FACTLAB_IMPORT_MAX_ATTEMPTS", "3"))
# After each dataset import a background job prepares what task pages need (FRANK: entity pools, traps,
# relevance), so that claims do no NLP; "0" leaves it to ``manage.py prepare_pages`` or the first claims.
FACTLAB_PREPARE_PAGES_AFTER_IMPORT = os.environ.get("FACTLAB_PREPARE_PAGES_AFTER_IMPORT", "1") != "0"
# Claims look for expired or unattended slots at most this often per campaign and web process while work is
# left (a claim that finds none always looks; the beat task sweeps every minute). 0: on every claim.
FACTLAB_SLOT_SWEEP_SECONDS = float(os.environ.get("FACTLAB_SLOT_SWEEP_SECONDS", "5"))
# Adaptive redundancy: a submit queues a refit of the campaign's label model at most once per this many
# seconds (delayed by as much); the beat schedule refits running adaptive campaigns every
# FACTLAB_LABEL_REFIT_SECONDS in case a message was lost.
FACTLAB_LABEL_REFIT_DEBOUNCE_SECONDS = float(os.environ.get("FACTLAB_LABEL_REFIT_DEBOUNCE_SECONDS", "10"))
FACTLAB_LABEL_REFIT_SECONDS = float(os.environ.get("FACTLAB_LABEL_REFIT_SECONDS", "60"))
# The admin pages' figures (metrics_service.figures) are computed by a worker after data changes; after a
# submit, the computation is queued at most once per this many seconds (delayed by as much), so that a burst
# of submissions makes one computation.
FACTLAB_FIGURES_DEBOUNCE_SECONDS = float(os.environ.get("FACTLAB_FIGURES_DEBOUNCE_SECONDS", "30"))
# Uploaded files are deleted once imported; failed ones are kept this long for inspection.
FACTLAB_IMPORT_FAILED_RETENTION_HOURS = float(os.environ.get("FACTLAB_IMPORT_FAILED_RETENTION_HOURS", "168"))

# --- Celery / Redis
REDIS_URL = os.environ.get("REDIS_URL", "")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", REDIS_URL or None)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not CELERY_BROKER_URL)
# `make demo` (scripts/demo.sh): CELERY_BROKER_URL=filesystem:// is kombu's embedded transport, message files
# in FACTLAB_QUEUE_DIR shared by the web process and the workers on this machine, so the demo runs jobs in
# real workers without Redis.
FACTLAB_EMBEDDED_BROKER = CELERY_BROKER_URL.startswith("filesystem://")
FACTLAB_QUEUE_DIR = Path(os.environ.get("FACTLAB_QUEUE_DIR", BASE_DIR / "var" / "queue"))
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = _queues.CPU
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Seconds before Redis delivers an unacknowledged message again (a killed worker's task). It must exceed the
# longest chunk or import, else a slow one runs twice; the beat below finds dead workers' jobs much sooner.
CELERY_VISIBILITY_TIMEOUT = int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT}
# A broker outage must not hang a request: publishing gives up quickly (the beat sends the message later).
CELERY_BROKER_CONNECTION_TIMEOUT = float(os.environ.get("CELERY_BROKER_CONNECTION_TIMEOUT", "2"))
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
# Task modules not named tasks.py (autodiscovery only finds those).
CELERY_IMPORTS = ["metrics_service.tasks_report", "metrics_service.tasks_labels"]
# How often a worker looks for messages of lost workers older than the visibility timeout to deliver again
# (kombu's defaults: a check every 10 s, a scan every 10th check).
CELERY_BROKER_TRANSPORT_OPTIONS.update(
    unacked_restore_interval=int(os.environ.get("CELERY_UNACKED_RESTORE_INTERVAL", "10")),
    unacked_restore_throttle=int(os.environ.get("CELERY_UNACKED_RESTORE_THROTTLE", "10")),
)
if FACTLAB_EMBEDDED_BROKER:
    for _folder in ("messages", "control"):
        (FACTLAB_QUEUE_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS.update(
        data_folder_in=str(FACTLAB_QUEUE_DIR / "messages"), data_folder_out=str(FACTLAB_QUEUE_DIR / "messages"),
        control_folder=str(FACTLAB_QUEUE_DIR / "control"), store_processed=False,
    )
# Queues (factlab/queues.py): "interactive" for imports and reports, "cpu" for page preparation and light
# scoring, "gpu" for model-based scoring; submit_scoring_job names the scoring queue explicitly.
CELERY_TASK_ROUTES = _queues.TASK_ROUTES
# Time limits of Celery tasks, in seconds. At the soft limit the task gets SoftTimeLimitExceeded inside its
# code and fails like any other error (the job row says so: an import or page preparation is failed, a scoring
# chunk is retried and then failed); at the hard limit the worker kills the process running it and starts a
# fresh one. The default suits the short tasks (the beat's healing and purging every minute, small lookups);
# the long jobs below have their own. Every hard limit stays below CELERY_VISIBILITY_TIMEOUT, so a task that
# hangs is stopped before Redis would deliver its message a second time. The process that sends a task puts its
# limits into the message (web and workers read these same settings). Only the prefork pool (production's
# workers) enforces them; `make demo` and the suite's solo-pool workers run without.
CELERY_TASK_SOFT_TIME_LIMIT = int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", "120"))
CELERY_TASK_TIME_LIMIT = int(os.environ.get("CELERY_TASK_TIME_LIMIT", "180"))
# (soft, hard) per task name. Imports stream files up to FACTLAB_MAX_UPLOAD_BYTES (a million scores: ~20 s on a
# quiet machine); page preparation runs spaCy over every document (FRANK: ~50 s quiet, minutes on a busy
# machine); a scoring chunk runs a model on up to its chunk of summaries on a CPU; a report fits the label
# models and bootstraps every statistic (FRANK: ~20 s cold); the figures are computed after data changes;
# refits fit a campaign's label model (GLAD: ~4 s on FRANK's 10,800 judgements), the beat's one every
# adaptive campaign in turn.
FACTLAB_TASK_TIME_LIMITS = {
    "annotate.run_import_job": (1800, 1860),
    "annotate.prepare_campaign_pages": (1800, 1860),
    "metrics_service.tasks.score_chunk": (1800, 1860),
    "metrics_service.tasks_report.compute_report": (900, 960),
    "metrics_service.compute_campaign_figures": (600, 660),
    "metrics_service.refit_labels": (300, 360),
    "metrics_service.refit_adaptive_labels": (900, 960),
}
# A deployment whose jobs need longer (a model scorer on a slow CPU, bigger chunks) sets its own pairs, e.g.
# FACTLAB_TASK_TIME_LIMITS="metrics_service.tasks.score_chunk=3000:3300" (keep them below the visibility timeout).
for _item in filter(None, (part.strip() for part in os.environ.get("FACTLAB_TASK_TIME_LIMITS", "").split(","))):
    _name, _, _pair = _item.partition("=")
    _soft, _, _hard = _pair.partition(":")
    if not (_soft.isdigit() and _hard.isdigit() and 0 < int(_soft) < int(_hard)):
        raise ImproperlyConfigured(f"FACTLAB_TASK_TIME_LIMITS: {_item!r} is not TASK=SOFT:HARD with 0 < SOFT < HARD seconds")
    FACTLAB_TASK_TIME_LIMITS[_name.strip()] = (int(_soft), int(_hard))
CELERY_TASK_ANNOTATIONS = {
    name: {"soft_time_limit": soft, "time_limit": hard} for name, (soft, hard) in FACTLAB_TASK_TIME_LIMITS.items()
}
# Seconds between a running campaign's dashboard checks for new data (it reloads only when there is some).
FACTLAB_DASHBOARD_REFRESH_SECONDS = max(5, int(os.environ.get("FACTLAB_DASHBOARD_REFRESH_SECONDS", "60")))
# Scoring jobs: starts of a chunk before it is failed for good (re-deliveries after a lost worker count),
# and how long a chunk may stay "running" before requeue_stale_chunks sends it again.
FACTLAB_SCORING_MAX_ATTEMPTS = int(os.environ.get("FACTLAB_SCORING_MAX_ATTEMPTS", "5"))
# The age fallback matches the broker's visibility timeout: by then Redis re-delivers the message anyway.
FACTLAB_SCORING_STALE_SECONDS = int(os.environ.get("FACTLAB_SCORING_STALE_SECONDS", str(CELERY_VISIBILITY_TIMEOUT)))
# Report jobs (queue `reports`) one user may have queued or running at once; one more is refused with 429
# (metrics_service/report_jobs.py). Identical requests join the running job and are not counted.
FACTLAB_REPORT_JOBS_PER_USER = int(os.environ.get("FACTLAB_REPORT_JOBS_PER_USER", "2"))
# Self-healing (celery beat, `celery -A factlab beat`): every FACTLAB_HEAL_INTERVAL_SECONDS, jobs whose
# message never reached the broker and jobs of dead workers (no running lock) older than the grace time
# are sent again; assignments past their deadline are expired; finished uploads are purged hourly.
FACTLAB_HEAL_INTERVAL_SECONDS = float(os.environ.get("FACTLAB_HEAL_INTERVAL_SECONDS", "60"))
FACTLAB_HEAL_GRACE_SECONDS = float(os.environ.get("FACTLAB_HEAL_GRACE_SECONDS", "60"))
# A job sent to the broker but not picked up by any worker for this long is sent again: a message lost in
# the broker (a Redis restart without persistence, a flushed database) is the same as one never sent. A
# duplicate of a message that was only waiting is harmless (every job skips work already done), so this is
# above the time a job may wait in its queue on a busy worker, not above its run time.
FACTLAB_HEAL_PENDING_SECONDS = float(os.environ.get("FACTLAB_HEAL_PENDING_SECONDS", "600"))
# Workers (factlab/liveness.py): a message left waiting this long while a worker had a free slot means that
# worker stopped consuming (a known kombu failure after a Redis restart): it stops with status 70 for its
# supervisor to start a fresh one, and `manage.py worker_alive` (the health check) fails. A worker asked to
# stop exits within FACTLAB_WORKER_STOP_SECONDS, running tasks or not (their jobs are delivered again).
FACTLAB_WORKER_STUCK_SECONDS = float(os.environ.get("FACTLAB_WORKER_STUCK_SECONDS", "120"))
FACTLAB_WORKER_STOP_SECONDS = float(os.environ.get("FACTLAB_WORKER_STOP_SECONDS", "30"))
FACTLAB_WORKER_STATE_DIR = Path(os.environ.get("FACTLAB_WORKER_STATE_DIR", Path(tempfile.gettempdir()) / "factlab-workers"))
# Redis may come up after a worker (a reboot, a compose stack): the worker keeps trying instead of exiting.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    "heal-scoring-jobs": {"task": "metrics_service.tasks.heal_scoring_jobs", "schedule": FACTLAB_HEAL_INTERVAL_SECONDS},
    "heal-import-jobs": {"task": "annotate.heal_import_jobs", "schedule": FACTLAB_HEAL_INTERVAL_SECONDS},
    "heal-page-preparations": {"task": "annotate.heal_page_preparations", "schedule": FACTLAB_HEAL_INTERVAL_SECONDS},
    "expire-stale-assignments": {"task": "annotate.expire_stale_assignments", "schedule": FACTLAB_HEAL_INTERVAL_SECONDS},
    "purge-import-uploads": {"task": "annotate.purge_import_uploads", "schedule": 3600.0},
    "refit-adaptive-labels": {"task": "metrics_service.refit_adaptive_labels", "schedule": FACTLAB_LABEL_REFIT_SECONDS},
}
# Extra scorers, "name=module:Class,name2=module:Class2" (deployment-specific ones; the worker tests add a slow one).
FACTLAB_EXTRA_SCORERS = dict(
    item.strip().split("=", 1) for item in os.environ.get("FACTLAB_EXTRA_SCORERS", "").split(",") if "=" in item
)


def _cache_url(redis_url: str) -> str:
    """The cache lives in the Redis database after the broker's, so clearing it never drops queued tasks."""
    explicit = os.environ.get("FACTLAB_CACHE_URL", "")
    if explicit or not redis_url:
        return explicit
    base, _, db = redis_url.rstrip("/").rpartition("/")
    return f"{base}/{int(db) + 1}" if db.isdigit() and base.count("/") >= 2 else redis_url


CACHE_URL = _cache_url(REDIS_URL)
# With Redis down the cache answers "miss" and logs a warning (django-redis IGNORE_EXCEPTIONS): reports are
# computed uncached, progress is read from the database, rate limits fail open (annotate.ratelimits).
DJANGO_REDIS_IGNORE_EXCEPTIONS = True
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
DJANGO_REDIS_LOGGER = "factlab.cache"
CACHES = {
    "default": (
        {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": CACHE_URL,
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 2, "IGNORE_EXCEPTIONS": True},
        }
        if CACHE_URL
        # Without Redis but with workers (the demo), progress and reports pass through files all processes share.
        else {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": str(FACTLAB_QUEUE_DIR.parent / "cache")}
        if FACTLAB_EMBEDDED_BROKER
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "factlab"}
    )
}

# Sessions are read on every request: from Redis when there is one (the database stays the record, so a
# lost cache logs nobody out); a per-process memory cache could keep a logged-out session alive elsewhere.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db" if CACHE_URL else "django.contrib.sessions.backends.db"

# --- REST framework
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "annotate.api.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotate.api.exceptions.exception_handler",
    # JSON as DRF parses it, with over-long integers refused in words (annotate.api.parsers)
    "DEFAULT_PARSER_CLASSES": [
        "annotate.api.parsers.JSONParser", "rest_framework.parsers.FormParser", "rest_framework.parsers.MultiPartParser",
    ],
}
# API tokens expire this many hours after creation (0: never); a password change revokes them at once.
FACTLAB_TOKEN_TTL_HOURS = float(os.environ.get("FACTLAB_TOKEN_TTL_HOURS", "720"))
SPECTACULAR_SETTINGS = {
    "TITLE": "FactLab API",
    "DESCRIPTION": "Campaigns, datasets, metric scoring jobs, exports and analysis reports for summary factuality evaluation.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "annotate.api.schema.add_error_responses",
                            "annotate.api.schema.state_registry_constraints", "annotate.api.schema.state_text_constraints"],
    "SCHEMA_PATH_PREFIX": r"/api/",
    "ENUM_NAME_OVERRIDES": {
        # The registered kinds (every installed protocol app), as the field's choices are.
        "CampaignKindEnum": "annotate.kinds.kind_choices",
        "JudgementSourceEnum": "annotate.models.JudgementSource",
        "MetricSourceEnum": "annotate.models.MetricSource",
        "ImportKindEnum": [("dataset", "Dataset"), ("scores", "Metric scores")],
        # Several resources have a "status": each its own named enum.
        "CampaignStatusEnum": "annotate.models.CampaignStatus",
        "ImportStatusEnum": "annotate.models.ImportStatus",
        "AssignmentStatusEnum": "annotate.models.AssignmentStatus",
        "ReviewStatusEnum": "annotate.models.ReviewStatus",
        "JobStatusEnum": "metrics_service.models.JobStatus",
    },
}

# --- Rate limits (django-ratelimit). Counted in the default cache, which must be shared between
# processes (Redis, REDIS_URL) in production; locmem (per process) is accepted in development only.
# Rates are "N/s|m|h|d"; tests and the load benchmark raise them through the environment.
RATELIMIT_ENABLE = env_bool("FACTLAB_RATELIMIT_ENABLE", True)
RATELIMIT_USE_CACHE = "default"
# An unreachable cache must not lock everyone out: limits are skipped (with a logged warning) until it is back.
RATELIMIT_FAIL_OPEN = True
# Login attempts (POST) per client IP, and per username tried (slows password guessing from many IPs).
FACTLAB_RATELIMIT_LOGIN = os.environ.get("FACTLAB_RATELIMIT_LOGIN", "10/m")
# Submissions (POST) per user: a real HIT takes minutes, and retries of one submission are idempotent anyway.
FACTLAB_RATELIMIT_SUBMIT = os.environ.get("FACTLAB_RATELIMIT_SUBMIT", "30/m")
# New crowd identities (first arrival of a Prolific/MTurk id) per client IP; each campaign also has an hourly cap.
FACTLAB_RATELIMIT_CROWD_IDENTITY = os.environ.get("FACTLAB_RATELIMIT_CROWD_IDENTITY", "20/h")
if not REDIS_URL and not PRODUCTION:
    SILENCED_SYSTEM_CHECKS = ["django_ratelimit.E003", "django_ratelimit.W001"]

# --- Security: safe defaults, strict in production mode.
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the annotation pages read the token for fetch() calls
X_FRAME_OPTIONS = "DENY"  # only crowd workers' pages may be framed (MTurk): annotate.middleware
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", str(60 * 60 * 24 * 365)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Origins allowed to show the worker pages (/c/...) in a frame: MTurk's external questions.
FACTLAB_CROWD_FRAME_ANCESTORS = os.environ.get(
    "FACTLAB_CROWD_FRAME_ANCESTORS", "https://www.mturk.com https://workersandbox.mturk.com"
).split()
# A framed page only gets its cookies when they are SameSite=None (which needs Secure): crowd workers' cookies
# only (annotate.middleware); every other session stays Lax, Django's default.
FACTLAB_CROWD_COOKIE_SAMESITE = "None" if PRODUCTION and FACTLAB_CROWD_FRAME_ANCESTORS else "Lax"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("FACTLAB_LOG_LEVEL", "WARNING")},
}

# --- Domain settings
# FACTLAB_SPACY_MODEL (the spaCy model of both apps) is read where the one loader is: annotate/spacy_pipeline.py.
