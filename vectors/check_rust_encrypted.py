#!/usr/bin/env python3
"""Rust -> Python: check that rows encrypted by langgraph-codec decrypt and decode
with the real Python package (langgraph-checkpoint==4.3.2 + pycryptodome).

Usage::

    cargo run --example emit_encrypted_vectors -- /tmp/rust_encrypted.jsonl
    .venv/bin/python vectors/check_rust_encrypted.py /tmp/rust_encrypted.jsonl

Every expected value, key, type tag and associated data is built here from first
principles (this script's own tables), never taken from the Rust output. Line names:

- ``{mode}{keylen}_{case}``: decrypted and decoded by the real
  ``EncryptedSerializer.from_pycryptodome_aes(key=..., mode=...)``.
- ``aad_{mode}{keylen}_{kind}_{case}``: bound to upstream LangGraph's canonical AAD,
  which 4.3.2's EncryptedSerializer cannot pass: decrypted with pycryptodome directly
  (``cipher.update(aad)``), decoded by the real ``JsonPlusSerializer``.
- ``zlib_{mode}{keylen}_{case}``: ``msgpack+zlib+aes``. 4.3.2 has no zlib wrapper:
  decrypted by the real package's cipher, then ``b"LGZ\\x01"`` + ``zlib.decompress``
  as upstream's CompressedSerializer does, decoded by the real ``JsonPlusSerializer``.

Prints ``N passed, M failed``; exits 1 on any failure or missing case.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import sys
import uuid
import zlib
from datetime import datetime, timezone

from Crypto.Cipher import AES
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

KEYS = {
    16: "rust-test-key-16",
    24: "rust-test-key-24-bytes!!",
    32: "rust-test-key-32-bytes-long!!!!!",
}
MODES = {"eax": AES.MODE_EAX, "gcm": AES.MODE_GCM}

CASES = {
    "null": None,
    "bytes_empty": b"",
    "bytes": b"\x00\x01secret\xff",
    "int": 42,
    "float": 2.5,
    "str": "héllo 🦜",
    "big_str": "x" * 5000,
    "nested": {"a": 1, "b": [1, 2, {"c": None}], "d": 2.5, "e": {"f": {"g": [True, False]}}},
    "int_keys": {1: "x", "neg": -(2**63), "big": 2**64 - 1},
    "datetime": datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "state": {"messages": [HumanMessage(content="hi", id="msg-1")]},
}
AAD_CASES = ("nested", "state", "null")
ZLIB_CASES = ("big_str", "nested", "datetime")

CKPT = "1ef4f797-8335-6428-8001-8a1503f9b875"
AADS = {
    "checkpoint": ("checkpoint", ("thread-1", "", CKPT)),
    "blob": ("blob", ("thread-1", "", "messages", "00000000000000000000000000000002.0")),
    "write": ("write", ("thread-1", "", CKPT, "task-1", -1, "__error__")),
}


def build_aad(kind: str, fields) -> bytes:
    """PROTOCOL.md section 4: b"langgraph-aad-v1" | u32be(len(kind)) | kind |
    u32be(n_fields) | (u32be(len(f)) | f)*, fields as str(field) in UTF-8."""
    k = kind.encode()
    fs = [str(f).encode() for f in fields]
    out = b"langgraph-aad-v1" + struct.pack(">I", len(k)) + k + struct.pack(">I", len(fs))
    for f in fs:
        out += struct.pack(">I", len(f)) + f
    return out


def expected_names() -> set[str]:
    names = set()
    for mode in MODES:
        for klen in KEYS:
            p = f"{mode}{klen}"
            names |= {f"{p}_{c}" for c in CASES}
            names |= {f"aad_{p}_{k}_{c}" for k in AADS for c in AAD_CASES}
            names |= {f"zlib_{p}_{c}" for c in ZLIB_CASES}
    return names


def plain_tag(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bytes):
        return "bytes"
    return "msgpack"


def same(a, b) -> bool:
    """Equality that also checks types (1 != True, bytes != bytearray)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a.keys()) == list(b.keys()) and all(
            same(k1, k2) and same(a[k1], b[k2]) for k1, k2 in zip(a, b)
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def check_line(row: dict, jp: JsonPlusSerializer) -> None:
    name = row["name"]
    m = re.fullmatch(r"(aad_|zlib_)?(eax|gcm)(16|24|32)_(?:(checkpoint|blob|write)_)?(\w+)", name)
    assert m, f"unexpected name {name}"
    kind, mode, klen, aad_kind, case = m.group(1), m.group(2), int(m.group(3)), m.group(4), m.group(5)
    assert case in CASES, f"unknown case {case}"
    key = KEYS[klen]
    assert row["key"] == key, "key differs from the agreed test key"
    assert row["mode"] == mode
    expected = CASES[case]
    data = base64.b64decode(row["data"])
    typ = row["type"]
    serde = EncryptedSerializer.from_pycryptodome_aes(key=key.encode(), mode=MODES[mode])
    other = EncryptedSerializer.from_pycryptodome_aes(
        key=key.encode(), mode=MODES["gcm" if mode == "eax" else "eax"]
    )
    # Python's own serialization of the expected value: the plaintext must be exactly it.
    ptyp, pdata = jp.dumps_typed(expected)
    assert ptyp == plain_tag(expected)

    if kind is None:
        assert typ == f"{ptyp}+aes", f"type {typ!r}"
        value = serde.loads_typed((typ, data))
        assert same(value, expected), f"{value!r} != {expected!r}"
        assert serde.cipher.decrypt("aes", data) == pdata, "plaintext bytes differ from Python's"
        try:
            other.loads_typed((typ, data))
        except ValueError:
            pass
        else:
            raise AssertionError("decrypted in the other mode too")
    elif kind == "aad_":
        assert typ == f"{ptyp}+aes", f"type {typ!r}"
        aad = build_aad(*AADS[aad_kind])
        assert base64.b64decode(row.get("aad", "")) == aad, "line's aad differs from the spec"
        nonce, tag, ct = data[:16], data[16:32], data[32:]
        c = AES.new(key.encode(), MODES[mode], nonce=nonce)
        c.update(aad)
        plaintext = c.decrypt_and_verify(ct, tag)
        assert plaintext == pdata, "plaintext bytes differ from Python's"
        value = jp.loads_typed((ptyp, plaintext))
        assert same(value, expected), f"{value!r} != {expected!r}"
        # Without the AAD (or with another row's) it must not decrypt.
        try:
            serde.loads_typed((typ, data))
        except ValueError:
            pass
        else:
            raise AssertionError("decrypted without its associated data")
    else:  # zlib_
        assert typ == f"{ptyp}+zlib+aes", f"type {typ!r}"
        plaintext = serde.cipher.decrypt("aes", data)
        assert plaintext[:4] == b"LGZ\x01", "missing LGZ marker"
        inner = zlib.decompress(plaintext[4:])
        assert inner == pdata, "decompressed bytes differ from Python's"
        value = jp.loads_typed((ptyp, inner))
        assert same(value, expected), f"{value!r} != {expected!r}"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    jp = JsonPlusSerializer()
    passed = failed = 0
    seen = set()
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            seen.add(row["name"])
            try:
                check_line(row, jp)
                passed += 1
            except Exception as e:  # noqa: BLE001 - report every failure
                failed += 1
                print(f"FAIL {row.get('name')}: {type(e).__name__}: {e}")
    for missing in sorted(expected_names() - seen):
        failed += 1
        print(f"FAIL {missing}: missing from the Rust output")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
