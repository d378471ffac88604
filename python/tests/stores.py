"""Opening Python's savers on a SQLite file or a Postgres schema, and listing the
serialized values a store holds (type tag, bytes)."""

from __future__ import annotations

import contextlib
import sqlite3

from langgraph.checkpoint.sqlite import SqliteSaver


@contextlib.contextmanager
def sqlite_saver(path, serde):
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    try:
        saver = SqliteSaver(conn, serde=serde)
        saver.setup()
        yield saver
    finally:
        conn.close()


def sqlite_rows(path) -> list[tuple[str, bytes]]:
    conn = sqlite3.connect(str(path))
    try:
        rows = conn.execute("SELECT type, checkpoint FROM checkpoints").fetchall()
        rows += conn.execute("SELECT type, value FROM writes").fetchall()
    finally:
        conn.close()
    return [(t, bytes(b)) for t, b in rows]


@contextlib.contextmanager
def postgres_saver(url, serde, schema=None, saver_class=None):
    import psycopg
    from psycopg.rows import dict_row
    from langgraph.checkpoint.postgres import PostgresSaver

    conn = psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    try:
        if schema:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            conn.execute(f'SET search_path TO "{schema}"')
        saver = (saver_class or PostgresSaver)(conn, serde=serde)
        saver.setup()
        yield saver
    finally:
        conn.close()


def postgres_rows(url, schema=None) -> list[tuple[str, bytes]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if schema:
            conn.execute(f'SET search_path TO "{schema}"')
        rows = conn.execute(
            "SELECT type, blob FROM checkpoint_blobs WHERE type <> 'empty'"
        ).fetchall()
        rows += conn.execute("SELECT type, blob FROM checkpoint_writes").fetchall()
    return [(t, bytes(b)) for t, b in rows]


def drop_schema(url, schema):
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
