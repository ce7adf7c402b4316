#!/usr/bin/env bash
# `make test` needs PostgreSQL (127.0.0.1:5432, user postgres) and Redis (127.0.0.1:6379): the concurrency,
# Celery-worker and browser tests run against them. When one does not answer, install and start it with
# Debian's apt-get (as root or through sudo, as `make browser` installs Chromium); when that is impossible,
# stop at once with one line naming what is missing. Never a red suite because a service is absent.
set -uo pipefail
PG_PORT=${FACTLAB_TEST_PG_PORT:-5432}
REDIS_PORT=${FACTLAB_TEST_REDIS_PORT:-6379}
py=${PYTHON:-python3}

answers() {  # answers PORT [redis]
  "$py" - "$@" <<'PY' 2>/dev/null
import socket, sys
s = socket.socket(); s.settimeout(1)
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
    if len(sys.argv) > 2:
        s.sendall(b"PING\r\n")
        sys.exit(0 if s.recv(16).startswith(b"+PONG") else 1)
except OSError:
    sys.exit(1)
PY
}

missing=()
answers "$PG_PORT" || missing+=("PostgreSQL on 127.0.0.1:$PG_PORT")
answers "$REDIS_PORT" redis || missing+=("Redis on 127.0.0.1:$REDIS_PORT")
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ]; then as_root=(); elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root=(sudo); else as_root=(none); fi
if [ "${as_root[*]}" = none ] || ! command -v apt-get >/dev/null 2>&1 || [ -n "${FACTLAB_NO_INSTALL:-}" ]; then
  joined=$(printf '%s, ' "${missing[@]}")
  echo "make test stops: missing ${joined%, } (install them, or run make test as root or with sudo so that it installs them with apt-get)" >&2
  exit 1
fi

run() { "${as_root[@]}" "$@"; }
run env DEBIAN_FRONTEND=noninteractive apt-get update -qq
if ! answers "$PG_PORT"; then
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  run service postgresql start >/dev/null 2>&1 || run pg_ctlcluster "$(ls /etc/postgresql | sort -V | tail -1)" main start
  # The suite connects as postgres over TCP; a fresh cluster asks for a password there, so it gets one (PGPASSWORD).
  run su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'postgres'\""
fi
if ! answers "$REDIS_PORT" redis; then
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  run service redis-server start >/dev/null 2>&1 || run redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT"
fi
for _ in $(seq 1 30); do
  answers "$PG_PORT" && answers "$REDIS_PORT" redis && exit 0
  sleep 1
done
echo "make test stops: PostgreSQL or Redis was installed but does not answer on 127.0.0.1 ($PG_PORT, $REDIS_PORT)" >&2
exit 1
