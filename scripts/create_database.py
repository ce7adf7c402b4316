#!/usr/bin/env python3
"""Create the PostgreSQL database named in DATABASE_URL when it does not exist yet (the production recipe's
first step on a new server). It connects to the server's `postgres` database with the same user, host and port;
an existing database is left alone, so the recipe can be run again.
"""
from __future__ import annotations

import os
import sys

import dj_database_url
import psycopg
from psycopg import sql


def main() -> int:
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        print("DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/factlab)", file=sys.stderr)
        return 2
    config = dj_database_url.parse(url)
    if "postgresql" not in config["ENGINE"]:
        print(f"DATABASE_URL names no PostgreSQL database ({config['ENGINE']}); nothing to create", file=sys.stderr)
        return 0
    connect = {"dbname": "postgres", "user": config.get("USER") or None, "password": config.get("PASSWORD") or None,
               "host": config.get("HOST") or None, "port": config.get("PORT") or None}
    name = config["NAME"]
    with psycopg.connect(**{k: v for k, v in connect.items() if v}, autocommit=True) as connection:
        if connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            print(f"database {name!r} exists")
            return 0
        connection.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(sql.Identifier(name)))
        print(f"database {name!r} created")
    return 0


if __name__ == "__main__":
    sys.exit(main())
