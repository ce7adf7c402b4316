#!/usr/bin/env bash
# `make demo`: migrate, import the FRANK demo, then serve it with a real Celery worker and beat on kombu's
# embedded filesystem broker (no Redis). Page preparation and the BUMP demo continue in the background;
# the server answers within a minute. Ctrl-C stops the server and every process this script started.
set -euo pipefail
PY=${PY:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
FRANK_DATA=${FRANK_DATA:-data/frank-subset}
export DJANGO_DEBUG=1 CELERY_BROKER_URL=${CELERY_BROKER_URL:-filesystem://}
unset REDIS_URL
mkdir -p var/log
started=$(date +%s)
pids=()
stop_all() {
  # A worker finishes its task before it stops (a page preparation can take minutes): it gets 10 s, then
  # Celery's cold shutdown (SIGQUIT, which also ends its pool's children). The beat finds such a job by its
  # released lock and sends it again at the next start.
  for signal in TERM QUIT KILL; do
    for pid in "${pids[@]}"; do kill -"$signal" "$pid" 2>/dev/null || true; done
    for _ in $(seq 1 10); do
      alive=0
      for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
      [ "$alive" = 0 ] && return 0
      sleep 1
    done
  done
}
trap stop_all EXIT
trap 'exit 130' INT TERM

"$PY" manage.py migrate --noinput
# The FRANK import (about 15 s) runs here; preparing its 499 task pages is queued for the worker, which starts
# after it (the import has the CPU to itself).
"$PY" manage.py setup_demo --frank-data "$FRANK_DATA" --no-progress
# Imports never wait behind reports, page preparation or scoring: one worker per kind of queue (factlab/queues.py).
"$PY" -m celery -A factlab worker -Q interactive -n interactive@%h --pool=solo -l info >var/log/worker-interactive.log 2>&1 &
pids+=($!)
"$PY" -m celery -A factlab worker -Q reports -n reports@%h --pool=solo -l info >var/log/worker-reports.log 2>&1 &
pids+=($!)
# Two slots: scoring a campaign need not wait for its page preparation.
"$PY" -m celery -A factlab worker -Q cpu,gpu -n long@%h --concurrency 2 -l info >var/log/worker-long.log 2>&1 &
pids+=($!)
"$PY" -m celery -A factlab beat -s var/celerybeat-schedule -l info >var/log/beat.log 2>&1 &
pids+=($!)
"$PY" manage.py setup_bump_demo >var/log/bump-demo.log 2>&1 &
pids+=($!)
echo "FactLab runs on http://$HOST:$PORT/ after $(( $(date +%s) - started )) s (admin: demo-admin / factlab-admin, annotator: demo-annotator / factlab-annotator, BUMP reviewer: demo-reviewer / factlab-reviewer)"
echo "Background: page preparation and jobs in var/log/worker-*.log, the BUMP demo in var/log/bump-demo.log."
"$PY" manage.py runserver "$HOST:$PORT" --noreload
