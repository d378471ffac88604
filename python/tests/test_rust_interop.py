"""Golden interop with rows the Rust crate writes (not hand-written bytes):
`examples/emit_encrypted_vectors` (EAX and GCM, 16/24/32-byte keys, msgpack+zlib+aes)
and the CLI (`lgcodec encode --encrypt`, `lgcodec rekey`). The oracle is Python 4.3.2's
own `EncryptedSerializer.from_pycryptodome_aes` where it can read the row."""

import base64
import json
import os
import subprocess

import pytest
from Crypto.Cipher import AES
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from conftest import NEW, OLD, OTHER
from langgraph_codec_keys import KeyRingCipher, PlaintextRefused, encrypted_serializer

MODES = {"eax": AES.MODE_EAX, "gcm": AES.MODE_GCM}


@pytest.fixture(scope="module")
def emitted(rust_bin, tmp_path_factory):
    out = tmp_path_factory.mktemp("emit") / "rows.jsonl"
    subprocess.run([str(rust_bin("example", "emit_encrypted_vectors")), str(out)], check=True)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    # rows bound to associated data are for the Rust/upstream AAD format, not 4.3.2
    return [x for x in lines if "aad" not in x]


def _row(x):
    return x["type"], base64.b64decode(x["data"])


def test_rust_rows_every_mode_and_key_size(emitted):
    plain = [x for x in emitted if not x["name"].startswith("zlib_")]
    assert {x["mode"] for x in plain} == {"eax", "gcm"} and len(plain) > 40
    keys = sorted({x["key"] for x in emitted})
    for x in plain:
        reference = EncryptedSerializer.from_pycryptodome_aes(
            key=x["key"].encode(), mode=MODES[x["mode"]]
        ).loads_typed(_row(x))
        # the row's key as primary, and as the last of several decrypt-only keys
        others = [k for k in keys if k != x["key"]]
        for primary, previous in ((x["key"], others), (NEW, [*others, x["key"]])):
            serde = encrypted_serializer(
                cipher=KeyRingCipher(primary.encode(), [p.encode() for p in previous])
            )
            assert serde.loads_typed(_row(x)) == reference, x["name"]


def test_rust_zlib_aes_rows(emitted):
    by_name = {x["name"]: x for x in emitted}
    zlib_rows = [x for x in emitted if x["name"].startswith("zlib_")]
    assert zlib_rows and all(x["type"].endswith("+zlib+aes") for x in zlib_rows)
    for x in zlib_rows:
        twin = by_name[x["name"][len("zlib_"):]]  # the same value, not compressed
        reference = EncryptedSerializer.from_pycryptodome_aes(
            key=twin["key"].encode(), mode=MODES[twin["mode"]]
        ).loads_typed(_row(twin))
        serde = encrypted_serializer(cipher=KeyRingCipher(x["key"].encode()))
        assert serde.loads_typed(_row(x)) == reference, x["name"]
        strict = encrypted_serializer(cipher=KeyRingCipher(x["key"].encode()), strict=True)
        assert strict.loads_typed(_row(x)) == reference  # encrypted: strict reads it


def _cli(rust_bin, args, records, env):
    proc = subprocess.run(
        [str(rust_bin("bin", "lgcodec")), *args],
        input="".join(json.dumps(r) + "\n" for r in records),
        capture_output=True, text=True, env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_cli_encrypted_rows_and_rekey_round_trip(rust_bin):
    values = [{"step": 1, "messages": ["a", "b"]}, "x" * 3000, [1.5, None, True]]
    rows = _cli(
        rust_bin, ["encode", "--encrypt", "--jsonl"],
        [{"type": "msgpack", "value": v} for v in values], {"LANGGRAPH_AES_KEY": OLD},
    )
    ring = encrypted_serializer(cipher=KeyRingCipher(NEW.encode(), [OTHER.encode(), OLD.encode()]))
    assert [ring.loads_typed(_row(r)) for r in rows] == values
    assert {ring.cipher.key_index(_row(r)[1]) for r in rows} == {2}
    # rows the package wrote under OLD, re-encrypted by `lgcodec rekey` to NEW:
    mine = encrypted_serializer(cipher=KeyRingCipher(OLD.encode()))
    written = [mine.dumps_typed(v) for v in values]
    rekeyed = _cli(
        rust_bin, ["rekey"],
        [{"type": t, "data": base64.b64encode(d).decode()} for t, d in written],
        {"LANGGRAPH_AES_KEY": NEW, "LANGGRAPH_AES_KEY_PREVIOUS": OLD},
    )
    only_new = encrypted_serializer(cipher=KeyRingCipher(NEW.encode()), strict=True)
    assert [only_new.loads_typed(_row(r)) for r in rekeyed] == values
    python_new = EncryptedSerializer.from_pycryptodome_aes(key=NEW.encode())
    assert [python_new.loads_typed(_row(r)) for r in rekeyed] == values
    # and rows in clear rekeyed (encrypted) by Rust pass strict mode
    clear = [JsonPlusSerializer().dumps_typed(v) for v in values]
    with pytest.raises(PlaintextRefused):
        only_new.loads_typed(clear[0])
    encrypted = _cli(
        rust_bin, ["rekey"],
        [{"type": t, "data": base64.b64encode(d).decode()} for t, d in clear],
        {"LANGGRAPH_AES_KEY": NEW},
    )
    assert [only_new.loads_typed(_row(r)) for r in encrypted] == values
