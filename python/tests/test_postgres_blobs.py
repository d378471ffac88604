"""``AllBlobsPostgresSaver``: a real graph writes through it, encrypted; no channel
value is left in the checkpoint JSONB; Python's stock ``PostgresSaver`` reads every
checkpoint as it reads the same run written by itself; ``lgcodec store audit
--deny-inline`` finds no inline value in clear (and finds the stock run's). Needs
LGCODEC_TEST_PG_URL."""

import asyncio
import json
import os
import subprocess
import uuid

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver

import graphs
import stores
from conftest import NEW, REPO, _cargo_build
from langgraph_codec_keys import encrypted_serializer
from langgraph_codec_keys.postgres import AllBlobsPostgresSaver, AsyncAllBlobsPostgresSaver

PG_URL = os.environ.get("LGCODEC_TEST_PG_URL")
pytestmark = pytest.mark.skipif(not PG_URL, reason="LGCODEC_TEST_PG_URL is not set")
THREADS = ["t-0", "t-1"]
ROUNDS = 5


@pytest.fixture
def schemas():
    made = []

    def new():
        made.append(f"lgck_blobs_{uuid.uuid4().hex[:12]}")
        return made[-1]

    yield new
    for schema in made:
        stores.drop_schema(PG_URL, schema)


@pytest.fixture(scope="session")
def lgcodec_store():
    """lgcodec with the store commands, in the one feature set every Rust build of the
    tests uses (built again here only when it is missing or stale)."""
    _cargo_build(["--all-features", "--bin", "lgcodec"])
    return REPO / "target" / "debug" / "lgcodec"


@pytest.fixture
def serde(monkeypatch):
    monkeypatch.setenv("LANGGRAPH_AES_KEY", NEW)
    return encrypted_serializer()


def _run(schema, serde, saver_class):
    with stores.postgres_saver(PG_URL, serde, schema, saver_class) as saver:
        graph = graphs.build_graph(saver)
        for _ in range(ROUNDS):
            for t in THREADS:
                graphs.one_round(graph, t)


def _history(saver, thread):
    """What a reader sees of a thread, newest first, without its ids, versions and
    timestamps (random or per run): every checkpoint's channel values, step, source,
    and its pending writes (channel, value)."""
    return [
        (
            t.checkpoint["channel_values"],
            t.metadata["step"],
            t.metadata["source"],
            [(channel, value) for _, channel, value in t.pending_writes],
        )
        for t in saver.list(graphs.config(thread))
    ]


def _inline_entries(schema):
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{schema}"')
        return conn.execute(
            "SELECT count(*) FROM checkpoints, "
            "jsonb_each(checkpoint -> 'channel_values')"
        ).fetchone()[0]


def _audit(lgcodec_store, schema):
    sep = "&" if "?" in PG_URL else "?"
    url = f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    run = subprocess.run(
        # --allow-free-space: the dead row versions Python's own upserts leave are
        # findings of their own, not what this audit is about.
        [str(lgcodec_store), "store", "audit", url, "--deny-inline", "--allow-free-space", "--json"],
        capture_output=True, text=True, env={**os.environ, "LANGGRAPH_AES_KEY": NEW},
    )
    return run.returncode, json.loads(run.stdout), run.stderr


def test_a_graph_through_it_leaves_no_value_inline_and_stock_readers_read_it_all(
    serde, schemas, lgcodec_store
):
    blobs, stock = schemas(), schemas()
    _run(blobs, serde, AllBlobsPostgresSaver)
    _run(stock, serde, PostgresSaver)
    assert _inline_entries(blobs) == 0
    assert _inline_entries(stock) > 0  # `count`, and the branch channels, inline
    with stores.postgres_saver(PG_URL, serde, blobs) as reader, stores.postgres_saver(
        PG_URL, serde, stock
    ) as reference:
        for t in THREADS:
            got = _history(reader, t)
            assert len(got) > ROUNDS and got == _history(reference, t), t
            # every checkpoint, one by one, as the stock reader gets it
            for listed in list(reader.list(graphs.config(t))):
                one = reader.get_tuple(listed.config)
                assert one.checkpoint["channel_values"] == listed.checkpoint["channel_values"]
            graphs.check_thread(graphs.build_graph(reader), t, ROUNDS)
    code, report, stderr = _audit(lgcodec_store, blobs)
    assert code == 0, (report, stderr)
    assert report["verdict"] == "clean" and report["inline_values_in_clear"] == 0
    assert report["inline"]["values"]["rows"] == 0 and report["totals"]["clear"]["rows"] == 0
    assert report["totals"]["primary"]["rows"] > 0
    assert stderr.startswith("lgcodec store audit: clean: "), stderr
    code, report, _ = _audit(lgcodec_store, stock)
    assert code == 1 and report["inline_values_in_clear"] > 0, report


def test_stock_and_all_blobs_writers_can_take_turns_on_a_thread(serde, schemas):
    schema = schemas()
    thread = "turns"
    for saver_class in (PostgresSaver, AllBlobsPostgresSaver, PostgresSaver, AllBlobsPostgresSaver):
        with stores.postgres_saver(PG_URL, serde, schema, saver_class) as saver:
            graphs.one_round(graphs.build_graph(saver), thread)
    with stores.postgres_saver(PG_URL, serde, schema) as reader:
        graphs.check_thread(graphs.build_graph(reader), thread, 4)


def test_a_value_a_stock_writer_kept_inline_survives_a_checkpoint_that_does_not_change_it(
    serde, schemas
):
    """A thread's `x` written inline by the stock saver, then a checkpoint by the
    all-blobs saver that changes only `y`: `x` is not in its new versions, and the
    all-blobs saver writes it as a blob of its current version, or readers lose it."""
    schema = schemas()
    cfg = {"configurable": {"thread_id": "kept", "checkpoint_ns": ""}}
    first = empty_checkpoint()
    first["channel_values"] = {"x": "hello", "n": None}
    first["channel_versions"] = {"x": "1", "n": "1"}
    with stores.postgres_saver(PG_URL, serde, schema) as stock:
        at = stock.put(cfg, first, {"step": 0}, {"x": "1", "n": "1"})
    second = empty_checkpoint()
    second["channel_values"] = {"x": "hello", "n": None, "y": [1, 2]}
    second["channel_versions"] = {"x": "1", "n": "1", "y": "2"}
    with stores.postgres_saver(PG_URL, serde, schema, AllBlobsPostgresSaver) as blobs:
        at = blobs.put(at, second, {"step": 1}, {"y": "2"})
    assert _inline_entries(schema) == 2  # the stock checkpoint's x and n
    with stores.postgres_saver(PG_URL, serde, schema) as stock:
        got = stock.get_tuple(at).checkpoint["channel_values"]
    assert got == {"x": "hello", "n": None, "y": [1, 2]}


def test_the_async_saver_too(serde, schemas):
    from psycopg import AsyncConnection
    from psycopg.rows import dict_row

    schema = schemas()

    async def main():
        async with await AsyncConnection.connect(
            PG_URL, autocommit=True, prepare_threshold=0, row_factory=dict_row
        ) as conn:
            await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            await conn.execute(f'SET search_path TO "{schema}"')
            saver = AsyncAllBlobsPostgresSaver(conn, serde=serde)
            await saver.setup()
            graph = graphs.build_graph(saver)
            for _ in range(3):
                await graphs.one_round_async(graph, "async")

    asyncio.run(main())
    assert _inline_entries(schema) == 0
    with stores.postgres_saver(PG_URL, serde, schema) as reader:
        graphs.check_thread(graphs.build_graph(reader), "async", 3)
