"""``generate_key`` and ``lgcodec key generate``: keys of the alphabet, distinct and
uniform, that Python's own ``EncryptedSerializer.from_pycryptodome_aes()`` and the Rust
parser both take -- rows encrypted under a key from one side are read by the other."""

import base64
import json
import os
import subprocess
from collections import Counter

import pytest
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

from langgraph_codec_keys import KeyConfigError, encrypted_serializer, generate_key, keys_from_env

# base64url's alphabet, written out here (not taken from the package).
ALPHABET = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
VALUE = {"step": 3, "messages": ["hi", "there"], "done": False}


def test_a_thousand_keys_are_distinct_uniform_and_of_the_alphabet():
    keys = [generate_key() for _ in range(1000)]
    assert len(set(keys)) == 1000
    assert all(len(k) == 32 and set(k) <= ALPHABET for k in keys)
    counts = Counter("".join(keys))
    # 32,000 draws over 64 symbols: 500 each, standard deviation about 22.
    assert len(counts) == 64 and all(350 <= n <= 650 for n in counts.values()), counts


@pytest.mark.parametrize("length", [16, 24, 32])
def test_lengths(length):
    key = generate_key(length)
    assert len(key) == len(key.encode()) == length and set(key) <= ALPHABET
    assert keys_from_env({"LANGGRAPH_AES_KEY": key}).primary == key.encode()


@pytest.mark.parametrize("length", [0, 15, 20, 33, 64, True])
def test_other_lengths_are_refused(length):
    with pytest.raises(KeyConfigError) as e:
        generate_key(length)
    assert "must be 16, 24, or 32 bytes long" in str(e.value)


def _lgcodec(rust_bin, args, key, stdin=""):
    proc = subprocess.run(
        [str(rust_bin("bin", "lgcodec")), *args],
        input=stdin, capture_output=True, text=True,
        env={**os.environ, "LANGGRAPH_AES_KEY": key},
    )
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("length", [16, 24, 32])
def test_rows_under_a_key_of_either_side_are_read_by_the_other(rust_bin, monkeypatch, length):
    # lgcodec's key: Python's own serializer writes under it, Rust reads the row.
    run = subprocess.run(
        [str(rust_bin("bin", "lgcodec")), "key", "generate", "--bytes", str(length)],
        capture_output=True, text=True, check=True,
    )
    assert run.stderr == "" and run.stdout.endswith("\n") and run.stdout.count("\n") == 1
    rust_key = run.stdout[:-1]
    assert len(rust_key) == length and set(rust_key) <= ALPHABET
    monkeypatch.setenv("LANGGRAPH_AES_KEY", rust_key)
    tag, data = EncryptedSerializer.from_pycryptodome_aes().dumps_typed(VALUE)
    assert tag == "msgpack+aes"
    record = json.dumps({"type": tag, "data": base64.b64encode(data).decode()})
    out = _lgcodec(rust_bin, ["decode", "--jsonl"], rust_key, record + "\n")
    assert json.loads(out.stdout)["value"] == VALUE
    # The companion's key: Rust writes under it, Python's own serializer reads the row.
    py_key = generate_key(length)
    monkeypatch.setenv("LANGGRAPH_AES_KEY", py_key)
    out = _lgcodec(
        rust_bin, ["encode", "--encrypt", "--jsonl"], py_key,
        json.dumps({"type": "msgpack", "value": VALUE}) + "\n",
    )
    row = json.loads(out.stdout)
    assert row["type"] == "msgpack+aes"
    data = base64.b64decode(row["data"])
    assert EncryptedSerializer.from_pycryptodome_aes().loads_typed((row["type"], data)) == VALUE
    assert encrypted_serializer().loads_typed((row["type"], data)) == VALUE
    # And the companion parses lgcodec's key as Python does.
    assert keys_from_env({"LANGGRAPH_AES_KEY": rust_key}).primary == rust_key.encode()
