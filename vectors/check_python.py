#!/usr/bin/env python3
"""Cross-check the committed golden vectors against the real Python package.

Run from the repository root with the pinned environment
(``pip install -r vectors/requirements.txt``)::

    python vectors/check_python.py

For every vector:

* ``unit.jsonl`` / ``graph_rows.jsonl``: ``loads_typed`` with a permissive
  ``JsonPlusSerializer`` (every module allowed), then ``dumps_typed`` again and
  compare ``(type, bytes)`` with the committed row.  Rows listed in
  ``EXPECTED_NON_ROUNDTRIP`` only have to load without raising (and must really
  fail to round trip, so the list cannot go stale).  Rows of type ``"empty"``
  (written by the saver itself for channels without a value, never passed to a
  serializer) must have empty data.
* ``encrypted.jsonl``: decrypt with the real ``EncryptedSerializer`` for the
  row's key/mode, compare the plaintext with ``plain_data`` and ``loads_typed``.
* determinism: ``generate.py``'s builders are re-run in memory and
  ``unit.jsonl`` and ``payloads/*`` must come out byte-identical.

Ends with ``python-check: N passed, M failed``; exit status 1 on any failure.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

sys.dont_write_bytecode = True  # keep vectors/ free of __pycache__
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import base64  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import traceback  # noqa: E402

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402

import pytypes  # noqa: E402, F401  (user classes must be importable by name "pytypes")

logging.getLogger("langgraph").setLevel(logging.ERROR)
logging.getLogger("langchain_core").setLevel(logging.ERROR)

# Vectors that Python itself cannot round trip: loads_typed -> dumps_typed gives
# different (type, bytes).  For these we only check that loads_typed does not raise.
EXPECTED_NON_ROUNDTRIP: dict[str, str] = {
    # -- tuples are written as arrays and read back as lists, so a value that
    #    needs a hashable tuple cannot be rebuilt; the ext hook falls back to the raw arg.
    "set_mixed": "set item (1, 2) comes back as list [1, 2] (unhashable); set() fails -> raw item list",
    "enum_tuple_value": "Enum value (1, 'a') comes back as list; Color(list) fails -> raw value [1, 'a']",
    # -- "json" rows: loads gives Python objects, dumps_typed always writes msgpack.
    "json_lc1_human_js": "json tag is read-only; re-encoded as msgpack",
    "json_lc1_ai_tool_calls_js": "json tag is read-only; re-encoded as msgpack",
    "json_lc1_tool_js": "json tag is read-only; re-encoded as msgpack",
    "json_lc1_system_legacy_id_path": "json tag is read-only; re-encoded as msgpack",
    "json_lc2_undefined": "json tag is read-only; Python keeps the dict {'lc': 2, 'type': 'undefined'} as is, re-encoded as msgpack",
    "json_lc2_undefined_in_dict": "json tag is read-only; inner undefined envelope kept as a plain dict, re-encoded as msgpack",
    "json_checkpoint_js": "json tag is read-only; re-encoded as msgpack",
    "json_metadata_js": "json tag is read-only; re-encoded as msgpack",
    "json_metadata_input_js": "json tag is read-only; re-encoded as msgpack",
    "json_write_send_js": "json tag is read-only; re-encoded as msgpack",
    "json_lc2_uuid_legacy_py": "json tag is read-only; re-encoded as msgpack",
    "json_lc2_set_legacy_py": "json tag is read-only; re-encoded as msgpack",
    "json_lc2_decimal_legacy_py": "json tag is read-only; re-encoded as msgpack",
    "json_lc2_datetime_method_legacy_py": "json tag is read-only; method ignored, datetime(str) fails -> None",
    "json_lc2_timedelta_kwargs_legacy_py": "json tag is read-only; re-encoded as msgpack",
    "json_lc2_pydantic_construct_legacy_py": "json tag is read-only; re-encoded as msgpack",
    "json_lc2_exception_legacy_py": "json tag is read-only; exception classes revive to None",
    "json_lc1_secret": "json tag is read-only; secret not in secrets_map/env -> None, re-encoded as tag null",
    "json_nested_plain": "json tag is read-only; re-encoded as msgpack",
    "json_unicode_escaped": "json tag is read-only; re-encoded as msgpack",
    "json_unicode_raw": "json tag is read-only; re-encoded as msgpack",
    "json_nan_inf": "json tag is read-only; re-encoded as msgpack",
    "json_floats": "json tag is read-only; re-encoded as msgpack",
    "json_big_ints": "json tag is read-only; re-encoded as msgpack",
    "json_top_level_string": "json tag is read-only; re-encoded as msgpack",
    "json_top_level_null": "json tag is read-only; None re-encodes as tag null",
    "json_top_level_list": "json tag is read-only; re-encoded as msgpack",
    "json_indented": "json tag is read-only; re-encoded as msgpack",
    # -- raw ext codes that 4.3.2 does not know: the ext hook returns None.
    "raw_ext99_unknown": "unknown ext code 99 -> None",
    "raw_ext8_unknown_code": "unknown ext code 8 -> None",
    "raw_ext127": "unknown ext code 127 -> None",
    "raw_ext99_in_map": "unknown ext code 99 inside a map -> {'a': None, 'b': 1}",
    # -- malformed payloads for known codes: the hook swallows the error.
    "malformed_ext0_two_tuple": "ext 0 with a 2-tuple: tup[2] IndexError -> None",
    "malformed_ext0_bad_arg": "ext 0 UUID('not-hex') raises -> fallback returns the raw arg 'not-hex'",
    "malformed_ext0_missing_module": "ext 0 import fails -> fallback returns the raw arg 1",
    "malformed_ext0_garbage": "ext 0 payload is not msgpack -> None",
    "malformed_ext1_args_not_list": "ext 1 date(*5) raises -> fallback returns the raw arg 5",
    "malformed_ext2_kwargs_not_map": "ext 2 time(**[1, 2]) raises -> fallback returns the raw list [1, 2]",
    "malformed_ext3_bad_iso": "ext 3 fromisoformat('not a date') raises -> fallback returns the raw string",
    "malformed_ext3_unsafe_method": "ext 3 method not in SAFE_MSGPACK_METHODS -> blocked, raw arg 'true'",
    "malformed_ext4_not_msgpack": "ext 4 payload b'\\xc1' does not unpack; `tup` unbound -> NameError branch -> None",
    "malformed_ext5_garbage": "ext 5 payload is not msgpack -> None",
    "malformed_ext5_unknown_class": "ext 5 import fails -> the raw kwargs dict {'a': 1}",
    "malformed_ext6_wrong_shape": "ext 6 reshape of 2 float64 into shape [3] fails -> None",
    "malformed_ext6_three_tuple": "ext 6 payload is a 3-tuple, unpacking fails -> None",
    "malformed_ext6_bad_dtype": "ext 6 dtype '<zz' invalid -> None",
    # -- trailing bytes are ignored by Python on read, and not written back.
    "trailing_bytes_after_value": "ormsgpack ignores bytes after the top-level value; re-dump is just b'\\x01'",
}

# Vectors whose loads_typed is expected to raise (documented behaviour we still
# want in the corpus so a Rust reader can be compared against it).
EXPECTED_LOAD_ERROR: dict[str, str] = {
    "malformed_ext4_garbage": "payload unpacks to -1 (trailing bytes ignored); -1[0] TypeError, the except branch's tup[2] raises TypeError again -> ValueError('ext_hook failed')",
    "malformed_ext5_scalar_payload": "payload unpacks to 1; 1[0] TypeError, except branch tup[2] TypeError -> ValueError('ext_hook failed')",
    "json_lc1_not_implemented": "langchain_core Reviver raises NotImplementedError for lc:1 not_implemented",
    "json_lc1_disallowed_namespace": "langchain_core Reviver (allowed_objects='core') raises ValueError for ids outside its allowlist",
    "json_invalid_syntax": "json.loads raises JSONDecodeError",
    "malformed_ext7_garbage": "ext 7 unpacks its payload without try/except; b'\\xc1' is invalid -> ValueError('ext_hook failed')",
}


class Checker:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def ok(self) -> None:
        self.passed += 1

    def fail(self, where: str, msg: str) -> None:
        self.failed += 1
        print(f"FAIL {where}: {msg}")


def read_jsonl(path: str) -> list[dict]:
    with open(path, "rb") as f:
        return [json.loads(line) for line in f.read().decode("ascii").splitlines() if line.strip()]


def permissive_serde() -> JsonPlusSerializer:
    return JsonPlusSerializer(allowed_msgpack_modules=True, allowed_json_modules=True)


def short(b: bytes, n: int = 80) -> str:
    return repr(b[:n]) + ("..." if len(b) > n else "")


def check_roundtrip_rows(c: Checker, label: str, rows: list[dict], serde: JsonPlusSerializer, names_seen: set[str]) -> None:
    for row in rows:
        name = row["name"]
        where = f"{label}:{name}"
        if name in names_seen:
            c.fail(where, "duplicate name")
            continue
        names_seen.add(name)
        typ = row["type"]
        data = base64.b64decode(row["data"])
        if typ == "empty":
            if data == b"":
                c.ok()
            else:
                c.fail(where, "'empty' row with non-empty data")
            continue
        try:
            value = serde.loads_typed((typ, data))
        except Exception as exc:  # noqa: BLE001
            if name in EXPECTED_LOAD_ERROR:
                c.ok()
            else:
                c.fail(where, f"loads_typed raised {exc!r}")
            continue
        if name in EXPECTED_LOAD_ERROR:
            c.fail(where, "expected loads_typed to raise, it did not (stale EXPECTED_LOAD_ERROR entry)")
            continue
        try:
            typ2, data2 = serde.dumps_typed(value)
        except Exception as exc:  # noqa: BLE001
            if name in EXPECTED_NON_ROUNDTRIP:
                c.ok()
            else:
                c.fail(where, f"dumps_typed of the loaded value raised {exc!r}")
            continue
        same = typ2 == typ and bytes(data2) == data
        if name in EXPECTED_NON_ROUNDTRIP:
            if same:
                c.fail(where, "listed in EXPECTED_NON_ROUNDTRIP but it round trips (stale entry)")
            else:
                c.ok()
        elif same:
            c.ok()
        else:
            c.fail(
                where,
                f"round trip mismatch: committed ({typ}, {len(data)} B) {short(data)} "
                f"!= re-dumped ({typ2}, {len(data2)} B) {short(bytes(data2))}; loaded {value!r:.200}",
            )


def check_encrypted(c: Checker, rows: list[dict], names_seen: set[str]) -> None:
    import generate

    serdes: dict[tuple[str, str], object] = {}
    for row in rows:
        name = row["name"]
        where = f"encrypted:{name}"
        if name in names_seen:
            c.fail(where, "duplicate name")
            continue
        names_seen.add(name)
        key, mode = row["key"], row["mode"]
        if (key, mode) not in serdes:
            serdes[(key, mode)] = generate.encrypted_serde(key, mode)
        enc = serdes[(key, mode)]
        typ = row["type"]
        data = base64.b64decode(row["data"])
        ptyp = row["plain_type"]
        pdata = base64.b64decode(row["plain_data"])
        try:
            if "+" in typ:
                inner, cname = typ.split("+", 1)
                if inner != ptyp:
                    c.fail(where, f"type {typ!r} does not wrap plain_type {ptyp!r}")
                    continue
                plain = enc.cipher.decrypt(cname, data)
                if plain != pdata:
                    c.fail(where, f"decrypted plaintext {short(plain)} != plain_data {short(pdata)}")
                    continue
                if ptyp == "null" and len(data) != 32:
                    c.fail(where, f"null ciphertext should be 32 bytes, got {len(data)}")
                    continue
            else:
                if (typ, data) != (ptyp, pdata):
                    c.fail(where, "unencrypted row whose plain fields differ")
                    continue
                if typ == "empty":
                    if data != b"":
                        c.fail(where, "'empty' row with data")
                    else:
                        c.ok()
                    continue
            enc.loads_typed((typ, data))
        except Exception as exc:  # noqa: BLE001
            c.fail(where, f"{exc!r}\n{traceback.format_exc()}")
            continue
        c.ok()


def check_determinism(c: Checker) -> None:
    import generate

    try:
        unit_now = generate.render_jsonl(generate.unit_rows())
    except Exception as exc:  # noqa: BLE001
        c.fail("determinism:unit.jsonl", f"builder raised {exc!r}")
        return
    with open(generate.UNIT_PATH, "rb") as f:
        committed = f.read()
    if unit_now == committed:
        c.ok()
    else:
        now_lines = unit_now.splitlines()
        old_lines = committed.splitlines()
        diffs = [i for i in range(max(len(now_lines), len(old_lines))) if now_lines[i : i + 1] != old_lines[i : i + 1]]
        c.fail(
            "determinism:unit.jsonl",
            f"regenerated unit.jsonl differs from the committed file ({len(diffs)} lines differ, first: "
            f"{[(now_lines[i][:60] if i < len(now_lines) else None) for i in diffs[:5]]})",
        )
    for name, data in generate.build_payloads().items():
        path = os.path.join(generate.PAYLOAD_DIR, name)
        try:
            with open(path, "rb") as f:
                committed = f.read()
        except OSError as exc:
            c.fail(f"determinism:payloads/{name}", repr(exc))
            continue
        if committed == data:
            c.ok()
        else:
            c.fail(f"determinism:payloads/{name}", f"regenerated {len(data)} B != committed {len(committed)} B")


def main() -> int:
    c = Checker()
    serde = permissive_serde()
    names_seen: set[str] = set()
    unit = read_jsonl(os.path.join(HERE, "unit.jsonl"))
    graph = read_jsonl(os.path.join(HERE, "graph_rows.jsonl"))
    encrypted = read_jsonl(os.path.join(HERE, "encrypted.jsonl"))

    check_roundtrip_rows(c, "unit", unit, serde, names_seen)
    check_roundtrip_rows(c, "graph", graph, serde, names_seen)
    for name in sorted((set(EXPECTED_NON_ROUNDTRIP) | set(EXPECTED_LOAD_ERROR)) - names_seen):
        c.fail(f"lists:{name}", "listed in EXPECTED_NON_ROUNDTRIP/EXPECTED_LOAD_ERROR but no such vector")
    check_encrypted(c, encrypted, names_seen)
    check_determinism(c)

    print(f"python-check: {c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
