#!/usr/bin/env bash
# Print export lines selecting the real PostgreSQL and Redis when they answer on 127.0.0.1,
# so the test suite runs against them (and falls back to SQLite / eager Celery when they don't).
# Usage: eval "$(scripts/services_env.sh)"
set -u
py=${PYTHON:-python3}
if [ -z "${DATABASE_URL:-}" ]; then
  if "$py" - <<'PY' 2>/dev/null; then
import socket, sys
s = socket.socket(); s.settimeout(1)
try:
    s.connect(("127.0.0.1", 5432))
except OSError:
    sys.exit(1)
PY
    echo "export DATABASE_URL=postgres://postgres@127.0.0.1:5432/factlab"
  fi
fi
if [ -z "${REDIS_URL:-}" ]; then
  if "$py" - <<'PY' 2>/dev/null; then
import socket, sys
s = socket.socket(); s.settimeout(1)
try:
    s.connect(("127.0.0.1", 6379)); s.sendall(b"PING\r\n")
    sys.exit(0 if s.recv(16).startswith(b"+PONG") else 1)
except OSError:
    sys.exit(1)
PY
    echo "export REDIS_URL=redis://127.0.0.1:6379/0"
  fi
fi
