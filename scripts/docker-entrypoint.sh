#!/bin/sh
# Container entry point: production settings by default, and keys that are never the public development
# ones. Without DJANGO_SECRET_KEY / FACTLAB_PSEUDONYM_KEY in the environment (.env), each is generated
# once into the secrets volume (FACTLAB_SECRETS_DIR) and shared by every container of the stack.
set -eu
SECRETS_DIR="${FACTLAB_SECRETS_DIR:-/secrets}"

key_from_volume() {
    file="$SECRETS_DIR/$1"
    if [ ! -s "$file" ]; then
        mkdir -p "$SECRETS_DIR"
        tmp="$file.$$"
        (umask 077 && python -c 'import secrets; print(secrets.token_urlsafe(64))' > "$tmp")
        mv -n "$tmp" "$file"   # another container may have won the race: keep its key
        rm -f "$tmp"
    fi
    cat "$file"
}

if [ -z "${DJANGO_SECRET_KEY:-}" ]; then
    DJANGO_SECRET_KEY="$(key_from_volume django_secret_key)"
    export DJANGO_SECRET_KEY
fi
if [ -z "${FACTLAB_PSEUDONYM_KEY:-}" ]; then
    FACTLAB_PSEUDONYM_KEY="$(key_from_volume pseudonym_key)"
    export FACTLAB_PSEUDONYM_KEY
fi
exec "$@"
