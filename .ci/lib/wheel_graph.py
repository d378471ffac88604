"""The `langgraph-codec` wheel's graph smoke test (.ci/checks.d/wheel.sh), run by the
Python of a venv holding the installed wheel (with its dependency
`langgraph-codec-keys`) plus langgraph and its SQLite and Postgres savers:

  1. a real graph (python/tests/graphs.py) writes threads under key OLD through the
     companion's serializer (`encrypted_serializer()`, keys from the environment);
  2. the wheel's `lgcodec` audits it under NEW alone (findings: the control), re-keys
     it (`store rekey`, OLD decrypt-only) and audits it clean under NEW alone;
  3. a new saver and serializer, NEW only and strict mode on, read every thread
     (so does Python's own `EncryptedSerializer` under NEW) and resume it: one more
     round each, nothing lost or replayed.

    python -I .ci/lib/wheel_graph.py STORE...

STORE: a SQLite file path or a postgresql:// URL. Both `lgcodec` and the companion must
come from the venv (the checkout's python/src is never on the path). Exit status 0 when
every check passed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# graphs.py (the graph) and stores.py (opening savers, listing rows) import only
# langgraph; appended, so that nothing of the checkout shadows an installed module.
sys.path.append(str(REPO / "python" / "tests"))

import langgraph_codec_keys as lgck  # noqa: E402
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer  # noqa: E402

import graphs  # noqa: E402
import stores  # noqa: E402

OLD = "wheel-smoke-old-key-0123456789ab"  # 32 bytes
NEW = "wheel-smoke-new!"  # 16 bytes: key sizes may differ across a rotation
THREADS = ["w1", "w2", "w3"]
ROUNDS = 3  # a, b, a: every thread then waits at the interrupt before b
KEY_VARS = (
    "LANGGRAPH_AES_KEY",
    "LANGGRAPH_AES_KEY_PREVIOUS",
    "LANGGRAPH_AES_FALLBACK_KEYS",
    "LANGGRAPH_AES_STRICT",
)

SITE = Path(sysconfig.get_paths()["purelib"]).resolve()
LGCODEC = Path(sysconfig.get_paths()["scripts"]) / "lgcodec"


def keys(**env: str) -> None:
    for var in KEY_VARS:
        os.environ.pop(var, None)
    os.environ.update(env)


def lgcodec(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    return subprocess.run([str(LGCODEC), *args], env={**clean, **env}, capture_output=True, text=True)


def saver(store: str, serde):
    if store.startswith(("postgres://", "postgresql://")):
        return stores.postgres_saver(store, serde)
    return stores.sqlite_saver(store, serde)


def rows(store: str) -> list[tuple[str, bytes]]:
    if store.startswith(("postgres://", "postgresql://")):
        return stores.postgres_rows(store)
    return stores.sqlite_rows(store)


def key_indexes(store: str, ring: lgck.KeyRingCipher) -> set[int]:
    got = rows(store)
    assert got and all(tag.endswith("+aes") for tag, _ in got), {tag for tag, _ in got}
    return {ring.key_index(data) for _, data in got}


def smoke(store: str) -> None:
    name = "postgres" if "://" in store else "sqlite"
    # 1. the graph writes under OLD
    keys(LANGGRAPH_AES_KEY=OLD)
    with saver(store, lgck.encrypted_serializer()) as s:
        graph = graphs.build_graph(s)
        for _ in range(ROUNDS):
            for t in THREADS:
                graphs.one_round(graph, t)
    assert key_indexes(store, lgck.KeyRingCipher(OLD.encode())) == {0}
    print(f"{name}: {len(THREADS)} threads x {ROUNDS} rounds written under OLD ({len(rows(store))} values)")

    # 2. the CLI re-keys, then audits under NEW alone (which, before the re-key, must
    # find every value unreadable: the control that the audit below can fail). The
    # key probe stops that audit at once (exit 2, no key opens anything); past the
    # probe it counts every value unreadable.
    p = lgcodec("store", "audit", store, "--json", LANGGRAPH_AES_KEY=NEW)
    assert p.returncode == 2 and "opens under any key given" in p.stderr, (p.returncode, p.stdout, p.stderr)
    p = lgcodec("store", "audit", store, "--json", "--no-key-probe", LANGGRAPH_AES_KEY=NEW)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    totals = json.loads(p.stdout)["totals"]
    values = totals["total"]["rows"] - totals["empty"]["rows"]  # "empty": no value to open
    assert totals["unreadable"]["rows"] == values > 0, totals
    p = lgcodec("store", "rekey", store, "--vacuum", LANGGRAPH_AES_KEY=NEW, LANGGRAPH_AES_KEY_PREVIOUS=OLD)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    print(f"{name}: {(p.stdout + p.stderr).strip().splitlines()[-1]}")
    p = lgcodec("store", "audit", store, "--json", LANGGRAPH_AES_KEY=NEW)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    report = json.loads(p.stdout)
    assert report["verdict"] == "clean", p.stdout
    assert report["totals"]["primary"]["rows"] == values, p.stdout
    assert key_indexes(store, lgck.KeyRingCipher(NEW.encode())) == {0}
    print(f"{name}: lgcodec store audit under NEW alone: clean")

    # 3. NEW only, fail-closed: read, and resume every thread
    keys(LANGGRAPH_AES_KEY=NEW, LANGGRAPH_AES_STRICT="1")
    serde = lgck.encrypted_serializer()
    assert lgck.is_fail_closed(serde)
    with saver(store, EncryptedSerializer.from_pycryptodome_aes(key=NEW.encode())) as s:
        for t in THREADS:
            graphs.check_thread(graphs.build_graph(s), t, ROUNDS)
    with saver(store, serde) as s:
        graph = graphs.build_graph(s)
        for t in THREADS:
            graphs.check_thread(graph, t, ROUNDS)
            assert graph.get_state(graphs.config(t)).next == ("b",), t
            assert graphs.one_round(graph, t) == ROUNDS + 1
            graphs.check_thread(graph, t, ROUNDS + 1)
    print(f"{name}: every thread read and resumed under NEW alone, strict (count {ROUNDS + 1})")


def main() -> int:
    path = Path(lgck.__file__).resolve()
    assert path.is_relative_to(SITE), f"langgraph_codec_keys from {path}, not from {SITE}"
    assert LGCODEC.is_file(), LGCODEC
    print(f"langgraph_codec_keys {lgck.__version__} from {SITE}; lgcodec from {LGCODEC.parent}")
    for store in sys.argv[1:]:
        smoke(store)
    return 0


if __name__ == "__main__":
    sys.exit(main())
