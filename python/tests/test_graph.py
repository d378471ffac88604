"""A real StateGraph on SqliteSaver (and PostgresSaver on LGCODEC_TEST_PG_URL) under the
package's serializer: writing, resuming, rotation, fail-closed. Runs once as the
environment says and, from test_strict_msgpack_run, again with LANGGRAPH_STRICT_MSGPACK
on (the flag is read when LangGraph is imported, hence a second process)."""

import contextlib
import os
import uuid

import pytest
from langgraph.checkpoint.serde import _msgpack
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

import graphs
import stores
from conftest import NEW, OLD
from langgraph_codec_keys import (
    CipherError,
    KeyRingCipher,
    PlaintextRefused,
    encrypted_serializer,
    is_fail_closed,
)

PG_URL = os.environ.get("LGCODEC_TEST_PG_URL")
STRICT_MSGPACK = _msgpack.STRICT_MSGPACK_ENABLED


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    """(open(serde) -> context manager of a saver, rows() -> [(tag, bytes)])."""
    if request.param == "sqlite":
        path = tmp_path / "store.sqlite"
        yield (lambda serde: stores.sqlite_saver(path, serde)), (lambda: stores.sqlite_rows(path))
        return
    if not PG_URL:
        pytest.skip("LGCODEC_TEST_PG_URL is not set: PostgresSaver not tested")
    schema = f"lgck_{uuid.uuid4().hex[:12]}"
    try:
        yield (
            (lambda serde: stores.postgres_saver(PG_URL, serde, schema)),
            (lambda: stores.postgres_rows(PG_URL, schema)),
        )
    finally:
        stores.drop_schema(PG_URL, schema)


def keys(monkeypatch, primary, previous=None, fallback=None, strict=None):
    monkeypatch.setenv("LANGGRAPH_AES_KEY", primary)
    for var, val in (
        ("LANGGRAPH_AES_KEY_PREVIOUS", previous),
        ("LANGGRAPH_AES_FALLBACK_KEYS", fallback),
        ("LANGGRAPH_AES_STRICT", strict),
    ):
        if val is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, val)


def run(open_saver, serde, threads, rounds):
    with open_saver(serde) as saver:
        graph = graphs.build_graph(saver)
        for _ in range(rounds):
            for t in threads:
                graphs.one_round(graph, t)


def check(open_saver, serde, threads, rounds):
    with open_saver(serde) as saver:
        graph = graphs.build_graph(saver)
        for t in threads:
            graphs.check_thread(graph, t, rounds)


def test_strict_msgpack_path_is_taken_and_keeps_the_cipher_and_refusal(monkeypatch, tmp_path):
    keys(monkeypatch, NEW, strict="1")
    serde = encrypted_serializer()
    with stores.sqlite_saver(tmp_path / "s.sqlite", serde) as saver:
        graph = graphs.build_graph(saver)
        applied = graph._apply_checkpointer_allowlist(saver)
        if STRICT_MSGPACK:
            # LangGraph rebuilt a plain EncryptedSerializer around the same cipher
            assert applied is not saver and applied.serde is not serde
            assert type(applied.serde) is EncryptedSerializer
            assert applied.serde.cipher is serde.cipher
        else:
            assert applied is saver
        assert is_fail_closed(applied.serde)


def test_graph_writes_and_resumes_under_the_ring(monkeypatch, store):
    open_saver, rows = store
    keys(monkeypatch, OLD)
    threads = ["t1", "t2", "t3"]
    run(open_saver, encrypted_serializer(), threads, 3)
    got = rows()
    assert got and all(tag.endswith("+aes") for tag, _ in got), {t for t, _ in got}
    # a fresh process (new serializer, new saver) resumes every thread
    run(open_saver, encrypted_serializer(), threads, 2)
    check(open_saver, encrypted_serializer(), threads, 5)
    # Python's own serializer reads what the ring wrote (EAX, key as UTF-8 text)
    check(open_saver, EncryptedSerializer.from_pycryptodome_aes(key=OLD.encode()), threads, 5)


def test_rotation_resumes_across_the_primary_switch(monkeypatch, store):
    open_saver, rows = store
    threads = ["r1", "r2"]
    keys(monkeypatch, OLD)
    run(open_saver, encrypted_serializer(), threads, 2)
    # new key deployed as a fallback: still written under OLD, NEW readable
    keys(monkeypatch, OLD, fallback=NEW)
    run(open_saver, encrypted_serializer(), threads, 1)
    # primary switched, old key decrypt-only
    keys(monkeypatch, NEW, fallback=OLD)
    run(open_saver, encrypted_serializer(), threads, 2)
    check(open_saver, encrypted_serializer(), threads, 5)
    ring = KeyRingCipher(NEW.encode(), [OLD.encode()])
    used = {ring.key_index(b) for _, b in rows()}
    assert used == {0, 1}  # rows under both keys until a rekey
    # the old key cannot be dropped yet: the history still holds rows under it
    # (what `lgcodec store rekey` is for)
    keys(monkeypatch, NEW)
    with open_saver(encrypted_serializer()) as saver:
        graph = graphs.build_graph(saver)
        with pytest.raises(CipherError):
            list(graph.get_state_history(graphs.config("r1")))


def test_gcm_rows_read(monkeypatch, store):
    open_saver, _ = store
    keys(monkeypatch, NEW, previous=OLD)
    run(open_saver, encrypted_serializer(mode="gcm"), ["g"], 2)
    from Crypto.Cipher import AES

    check(open_saver, EncryptedSerializer.from_pycryptodome_aes(key=NEW.encode(), mode=AES.MODE_GCM), ["g"], 2)
    run(open_saver, encrypted_serializer(), ["g"], 1)  # EAX writer continues a GCM thread
    check(open_saver, encrypted_serializer(), ["g"], 3)


def test_fail_closed_refuses_rows_in_clear(monkeypatch, store):
    open_saver, _ = store
    keys(monkeypatch, NEW)
    # a store in clear, written by Python's default serializer
    run(open_saver, JsonPlusSerializer(), ["c"], 2)
    # lenient: read in clear, and continued encrypted
    run(open_saver, encrypted_serializer(), ["c"], 1)
    check(open_saver, encrypted_serializer(), ["c"], 3)
    # strict: the clear rows of the history are refused, on the strict-msgpack
    # path too (graph.get_state goes through _apply_checkpointer_allowlist)
    keys(monkeypatch, NEW, strict="true")
    with open_saver(encrypted_serializer()) as saver:
        graph = graphs.build_graph(saver)
        with pytest.raises(PlaintextRefused, match="refusing unencrypted row"):
            list(graph.get_state_history(graphs.config("c")))
        # a thread whose rows are all encrypted works in strict mode
        graphs.one_round(graph, "fresh")
        graphs.one_round(graph, "fresh")
        graphs.check_thread(graph, "fresh", 2)


def test_fail_closed_refuses_a_clear_row_slipped_in(monkeypatch, tmp_path):
    """An attacker who can write the table swaps the latest checkpoint for a row in
    clear: strict mode refuses it; without strict mode Python reads it silently."""
    import sqlite3

    path = tmp_path / "s.sqlite"
    keys(monkeypatch, NEW)
    run(lambda s: stores.sqlite_saver(path, s), encrypted_serializer(), ["x"], 2)
    conn = sqlite3.connect(path)
    (cid, blob, tag) = conn.execute(
        "SELECT checkpoint_id, checkpoint, type FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 1"
    ).fetchone()
    checkpoint = encrypted_serializer().loads_typed((tag, blob))
    clear_tag, clear = JsonPlusSerializer().dumps_typed(checkpoint)
    conn.execute("UPDATE checkpoints SET type=?, checkpoint=? WHERE checkpoint_id=?", (clear_tag, clear, cid))
    conn.commit()
    conn.close()
    with stores.sqlite_saver(path, encrypted_serializer()) as saver:
        assert graphs.build_graph(saver).get_state(graphs.config("x")).values["count"] == 2
    keys(monkeypatch, NEW, strict="1")
    with stores.sqlite_saver(path, encrypted_serializer()) as saver:
        with pytest.raises(PlaintextRefused):
            graphs.build_graph(saver).get_state(graphs.config("x"))


def test_strict_msgpack_run():
    """Runs this module again in a process with LANGGRAPH_STRICT_MSGPACK=true."""
    if STRICT_MSGPACK:
        pytest.skip("already the strict-msgpack run")
    import subprocess
    import sys

    env = dict(os.environ, LANGGRAPH_STRICT_MSGPACK="true")
    here = os.path.dirname(__file__)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.join(here, "test_graph.py")],
        env=env, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    print(out.stdout.strip().splitlines()[-1])


def test_encryption_turned_on_in_steps(monkeypatch, store):
    """Clear store -> key deployed decrypt-only (writes in clear, reads encrypted) ->
    primary set. A process still at step 1 resumes a thread a step-2 process wrote; a
    process at step 0 could not (why step 1 exists)."""
    open_saver, rows = store
    run(open_saver, JsonPlusSerializer(), ["s"], 2)  # step 0: in clear
    keys(monkeypatch, NEW)
    monkeypatch.delenv("LANGGRAPH_AES_KEY")
    monkeypatch.setenv("LANGGRAPH_AES_FALLBACK_KEYS", NEW)
    step1 = encrypted_serializer()
    run(open_saver, step1, ["s"], 1)
    assert all("+" not in tag for tag, _ in rows())  # still written in clear
    keys(monkeypatch, NEW)
    run(open_saver, encrypted_serializer(), ["s"], 1)  # step 2 writes encrypted
    assert any(tag.endswith("+aes") for tag, _ in rows())
    with open_saver(JsonPlusSerializer()) as saver:  # a step-0 process fails
        with pytest.raises(NotImplementedError, match="Unknown serialization type"):
            graphs.build_graph(saver).get_state(graphs.config("s"))
    run(open_saver, step1, ["s"], 1)  # a step-1 process resumes it
    check(open_saver, encrypted_serializer(), ["s"], 5)


def test_async_saver_strict_with_concurrent_tasks(monkeypatch, tmp_path):
    """AsyncSqliteSaver: many threads read concurrently in one event loop under strict
    mode (the cipher's per-thread marker is consumed within one synchronous
    loads_typed, so tasks cannot interleave between decrypt and read), and a clear
    row is refused."""
    import asyncio

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = tmp_path / "a.sqlite"
    keys(monkeypatch, NEW, strict="1")
    threads = [f"a{i}" for i in range(8)]

    async def go():
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            saver.serde = encrypted_serializer()
            graph = graphs.build_graph(saver)
            for _ in range(3):
                await asyncio.gather(*(graphs.one_round_async(graph, t) for t in threads))
            states = await asyncio.gather(*(graph.aget_state(graphs.config(t)) for t in threads))
            assert [s.values["count"] for s in states] == [3] * len(threads)
            # a thread in clear next to them
            plain = AsyncSqliteSaver(saver.conn, serde=JsonPlusSerializer())
            await graphs.build_graph(plain).ainvoke({"notes": [], "count": 0}, graphs.config("clear"))
            results = await asyncio.gather(
                *(graph.aget_state(graphs.config(t)) for t in [*threads, "clear"]),
                return_exceptions=True,
            )
            assert all(not isinstance(r, Exception) for r in results[:-1])
            assert isinstance(results[-1], PlaintextRefused)

    asyncio.run(go())

