#!/usr/bin/env python3
"""Generate the golden test vectors for ``langgraph-codec`` by running the real
Python package (``langgraph-checkpoint==4.3.2``, see ``requirements.txt``).

Usage (from the repository root, with the pinned venv)::

    python vectors/generate.py                 # rewrite every vector file
    python vectors/generate.py --only unit     # only unit.jsonl + payloads/
    python vectors/generate.py --only graph --only encrypted

``unit.jsonl`` and ``payloads/`` are fully deterministic (``check_python.py``
regenerates them in memory and compares).  ``graph_rows.jsonl`` and
``encrypted.jsonl`` contain fresh uuids / timestamps / nonces on every run: the
committed file is the truth, regenerate them only on purpose.

The module is importable: ``build_unit_cases()``, ``unit_rows()``,
``render_jsonl()`` and ``build_payloads()`` are used by ``check_python.py``.
"""


import os
import sys

# --- determinism: string/bytes hashing decides set iteration order ------------
if __name__ == "__main__" and os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

sys.dont_write_bytecode = True  # keep vectors/ free of __pycache__
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import argparse  # noqa: E402
import base64  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import operator  # noqa: E402
import pathlib  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
from collections import deque  # noqa: E402
from datetime import date, datetime, time, timedelta, timezone  # noqa: E402
from decimal import Decimal  # noqa: E402
from ipaddress import (  # noqa: E402
    IPv4Address,
    IPv4Interface,
    IPv4Network,
    IPv6Address,
    IPv6Interface,
    IPv6Network,
)
from typing import Annotated, Any, TypedDict  # noqa: E402
from uuid import UUID  # noqa: E402
from zoneinfo import ZoneInfo  # noqa: E402

import numpy as np  # noqa: E402
import ormsgpack  # noqa: E402
import pydantic  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    ChatMessageChunk,
    FunctionMessage,
    FunctionMessageChunk,
    HumanMessage,
    HumanMessageChunk,
    RemoveMessage,
    SystemMessage,
    SystemMessageChunk,
    ToolMessage,
    ToolMessageChunk,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402
from langgraph.checkpoint.serde.types import _DeltaSnapshot  # noqa: E402
from langgraph.store.base import Item  # noqa: E402
from langgraph.types import Command, Interrupt, Overwrite, Send, TimeoutPolicy  # noqa: E402

import pytypes  # noqa: E402

# The real serializer warns once per "unregistered" type it revives; silence it.
logging.getLogger("langgraph").setLevel(logging.ERROR)

SERDE = JsonPlusSerializer()

UNIT_PATH = os.path.join(HERE, "unit.jsonl")
GRAPH_PATH = os.path.join(HERE, "graph_rows.jsonl")
ENCRYPTED_PATH = os.path.join(HERE, "encrypted.jsonl")
PAYLOAD_DIR = os.path.join(HERE, "payloads")

# Fixed keys for the encrypted vectors (ASCII, as LANGGRAPH_AES_KEY would be).
AES_KEYS = {
    16: "0123456789abcdef",
    24: "langgraph-codec-key-24by",
    32: "langgraph-codec-golden-key-32byt",
}


# =============================================================================
# helpers
# =============================================================================


def b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def render_jsonl(rows: list[dict]) -> bytes:
    """One JSON object per line, keys in insertion order, ASCII only."""
    out = []
    for row in rows:
        out.append(json.dumps(row, ensure_ascii=True, separators=(", ", ": ")))
    return ("\n".join(out) + "\n").encode("ascii")


def write_bytes(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def ext(code: int, payload: bytes) -> bytes:
    """A top-level msgpack ext value, written by ormsgpack itself."""
    return ormsgpack.packb(ormsgpack.Ext(code, payload))


def u(n: int) -> UUID:
    """Fixed, valid-looking UUIDs."""
    return UUID(f"00000000-0000-4000-8000-{n:012x}")


# =============================================================================
# unit cases
# =============================================================================

# Each case is (name, kind, value, python_repr)
#   kind "value": (type, bytes) = SERDE.dumps_typed(value)
#   kind "json":  type "json", bytes = value (already json.dumps'ed, utf-8)
#   kind "raw":   type "msgpack", bytes = value (built with ormsgpack.packb)


def _messages() -> dict[str, Any]:
    tool_call = {"name": "search", "args": {"q": "weather in Paris", "k": 3}, "id": "call_1", "type": "tool_call"}
    return {
        "msg_human": HumanMessage("hello", id="h1"),
        "msg_human_no_id": HumanMessage("no id"),
        "msg_human_named": HumanMessage("named", name="alice", id="h2", additional_kwargs={"x": 1}, response_metadata={"r": [1, 2]}),
        "msg_human_content_blocks": HumanMessage(
            [
                {"type": "text", "text": "describe this"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
            id="h3",
        ),
        "msg_human_unicode": HumanMessage("héllo wörld 你好 🦜🔗", id="h4"),
        "msg_ai": AIMessage("hi there", id="a1"),
        "msg_ai_tool_calls": AIMessage(
            "",
            id="a2",
            tool_calls=[
                tool_call,
                {"name": "calc", "args": {"expr": "1+1"}, "id": "call_2", "type": "tool_call"},
            ],
        ),
        "msg_ai_invalid_tool_calls": AIMessage(
            "oops",
            id="a3",
            invalid_tool_calls=[
                {"name": "search", "args": "{not json", "id": "call_3", "error": "bad json", "type": "invalid_tool_call"}
            ],
        ),
        "msg_ai_usage": AIMessage(
            "with usage",
            id="a4",
            usage_metadata={
                "input_tokens": 10,
                "output_tokens": 20,
                "total_tokens": 30,
                "input_token_details": {"cache_read": 2},
                "output_token_details": {"reasoning": 5},
            },
            response_metadata={"model_name": "gpt-x", "finish_reason": "stop"},
        ),
        "msg_ai_full": AIMessage(
            [{"type": "text", "text": "calling"}],
            id="a5",
            name="bot",
            additional_kwargs={"refusal": None},
            response_metadata={"model_provider": "openai", "logprobs": None},
            tool_calls=[tool_call],
            invalid_tool_calls=[{"name": None, "args": None, "id": None, "error": None, "type": "invalid_tool_call"}],
            usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
        ),
        "msg_system": SystemMessage("You are a helpful assistant.", id="s1"),
        "msg_tool": ToolMessage("42", tool_call_id="call_1", id="t1"),
        "msg_tool_artifact_error": ToolMessage(
            "boom",
            tool_call_id="call_2",
            id="t2",
            name="calc",
            artifact={"raw": [1, 2, 3], "when": "2024-01-01"},
            status="error",
        ),
        "msg_remove": RemoveMessage(id="h1"),
        "msg_remove_all": RemoveMessage(id="__remove_all__"),
        "msg_chat": ChatMessage("chatting", role="critic", id="c1"),
        "msg_function": FunctionMessage("fn result", name="get_time", id="f1"),
        "msg_human_chunk": HumanMessageChunk("hum", id="hc1"),
        "msg_ai_chunk": AIMessageChunk("ai chunk", id="ac1"),
        "msg_ai_chunk_tool_call_chunks": AIMessageChunk(
            "",
            id="ac2",
            tool_call_chunks=[{"name": "search", "args": '{"q": "x"}', "id": "call_9", "index": 0, "type": "tool_call_chunk"}],
        ),
        "msg_ai_chunk_last": AIMessageChunk("done", id="ac3", chunk_position="last"),
        "msg_system_chunk": SystemMessageChunk("sys chunk", id="sc1"),
        "msg_tool_chunk": ToolMessageChunk("tool chunk", tool_call_id="call_1", id="tc1"),
        "msg_chat_chunk": ChatMessageChunk("chat chunk", role="user", id="cc1"),
        "msg_function_chunk": FunctionMessageChunk("fn chunk", name="fn", id="fc1"),
    }


def _json_cases() -> list[tuple[str, bytes, Any]]:
    """Realistic "json"-tagged rows (LangGraphJS and pre-msgpack Python)."""
    compact = {"separators": (",", ":"), "ensure_ascii": False}  # JSON.stringify-like
    cases: list[tuple[str, dict | list | Any, dict]] = []
    human_js = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain_core", "messages", "HumanMessage"],
        "kwargs": {"content": "hi from js", "additional_kwargs": {}, "response_metadata": {}, "id": "js-h1"},
    }
    ai_js = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain_core", "messages", "AIMessage"],
        "kwargs": {
            "content": "calling a tool",
            "tool_calls": [{"name": "search", "args": {"q": "x"}, "id": "call_js", "type": "tool_call"}],
            "invalid_tool_calls": [],
            "additional_kwargs": {},
            "response_metadata": {"model_name": "gpt-4o"},
            "usage_metadata": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12},
            "id": "js-a1",
        },
    }
    tool_js = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain_core", "messages", "ToolMessage"],
        "kwargs": {"content": "result", "tool_call_id": "call_js", "status": "success", "additional_kwargs": {}, "response_metadata": {}, "id": "js-t1"},
    }
    system_legacy_path = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "SystemMessage"],
        "kwargs": {"content": "legacy id path"},
    }
    cases.append(("json_lc1_human_js", human_js, compact))
    cases.append(("json_lc1_ai_tool_calls_js", ai_js, compact))
    cases.append(("json_lc1_tool_js", tool_js, compact))
    cases.append(("json_lc1_system_legacy_id_path", system_legacy_path, {}))
    cases.append(("json_lc2_undefined", {"lc": 2, "type": "undefined"}, compact))
    cases.append(("json_lc2_undefined_in_dict", {"value": {"lc": 2, "type": "undefined"}, "other": 1}, compact))
    cases.append(
        (
            "json_checkpoint_js",
            {
                "v": 1,
                "id": "1ef4f797-8335-6428-8001-8a1503f9b875",
                "ts": "2024-08-01T12:00:00.000Z",
                "channel_values": {
                    "messages": [human_js, ai_js, tool_js],
                    "__start__": {"messages": [{"role": "user", "content": "hi"}]},
                    "counter": 3,
                    "maybe": {"lc": 2, "type": "undefined"},
                },
                "channel_versions": {"__start__": 2, "messages": 5, "agent": 4, "tools": "00000000000000000000000000000003.0.123"},
                "versions_seen": {"__input__": {}, "__start__": {"__start__": 1}, "agent": {"start:agent": 3}},
                "pending_sends": [],
            },
            compact,
        )
    )
    cases.append(
        (
            "json_metadata_js",
            {"source": "loop", "step": 3, "writes": {"agent": {"messages": [ai_js]}}, "parents": {}, "thread_id": "t-js"},
            compact,
        )
    )
    cases.append(("json_metadata_input_js", {"source": "input", "step": -1, "writes": {"__start__": {"messages": "hi"}}, "parents": {}}, compact))
    cases.append(("json_write_send_js", {"lc": 2, "type": "constructor", "id": ["langgraph", "types", "Send"], "kwargs": {"node": "worker", "arg": {"x": 1}}}, compact))
    # pre-msgpack Python JsonPlusSerializer envelopes (lc: 2)
    cases.append(("json_lc2_uuid_legacy_py", {"lc": 2, "type": "constructor", "id": ["uuid", "UUID"], "args": ["12345678123456781234567812345678"]}, {}))
    cases.append(("json_lc2_set_legacy_py", {"lc": 2, "type": "constructor", "id": ["builtins", "set"], "args": [[1, 2, 3]]}, {}))
    cases.append(("json_lc2_decimal_legacy_py", {"lc": 2, "type": "constructor", "id": ["decimal", "Decimal"], "args": ["1.10"]}, {}))
    cases.append(
        (
            "json_lc2_datetime_method_legacy_py",
            {"lc": 2, "type": "constructor", "id": ["datetime", "datetime"], "method": "fromisoformat", "args": ["2024-05-06T07:08:09+00:00"]},
            {},
        )
    )
    cases.append(
        (
            "json_lc2_timedelta_kwargs_legacy_py",
            {"lc": 2, "type": "constructor", "id": ["datetime", "timedelta"], "kwargs": {"days": 1, "seconds": 2, "microseconds": 3}},
            {},
        )
    )
    cases.append(
        (
            "json_lc2_pydantic_construct_legacy_py",
            {
                "lc": 2,
                "type": "constructor",
                "id": ["pytypes", "ModelV2"],
                "method": [None, "construct"],
                "kwargs": {"name": "legacy", "count": 2, "ratio": 0.5, "tags": [], "meta": {}, "maybe": None},
            },
            {},
        )
    )
    cases.append(("json_lc2_exception_legacy_py", {"lc": 2, "type": "constructor", "id": ["builtins", "ValueError"], "args": ["x"]}, {}))
    # LangChain envelopes Python refuses or drops
    cases.append(("json_lc1_secret", {"lc": 1, "type": "secret", "id": ["LGCODEC_TEST_SECRET_NOT_SET"]}, compact))
    cases.append(("json_lc1_not_implemented", {"lc": 1, "type": "not_implemented", "id": ["langchain", "tools", "SomeTool"], "repr": "SomeTool()"}, compact))
    cases.append(("json_lc1_disallowed_namespace", {"lc": 1, "type": "constructor", "id": ["evil_pkg", "module", "Thing"], "kwargs": {}}, compact))
    # plain JSON
    cases.append(("json_nested_plain", {"a": [1, 2, {"b": [None, True, False]}], "c": {"d": {"e": {"f": []}}}, "g": {}}, {}))
    cases.append(("json_unicode_escaped", {"text": "héllo 你好 🦜 \u0000 \u2028"}, {}))
    cases.append(("json_unicode_raw", {"text": "héllo 你好 🦜 \u2028"}, {"ensure_ascii": False}))
    cases.append(("json_nan_inf", {"nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"), "list": [float("nan")]}, {}))
    cases.append(("json_floats", [0.0, -0.0, 1.5, 0.1, 1e308, 5e-324, -2.5e-10, 123456789.125], {}))
    cases.append(("json_big_ints", [0, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, -(2**63)], {}))
    cases.append(("json_top_level_string", "just a string", {}))
    cases.append(("json_top_level_null", None, {}))
    cases.append(("json_top_level_list", [1, "two", 3.0, None], compact))
    cases.append(("json_indented", {"pretty": [1, 2], "nested": {"k": "v"}}, {"indent": 2, "sort_keys": True}))
    out = [(name, json.dumps(obj, **kw).encode("utf-8"), obj) for name, obj, kw in cases]
    out.append(("json_invalid_syntax", b'{"unterminated": [1, 2', '{"unterminated": [1, 2'))
    return out


def build_unit_cases() -> list[tuple[str, str, Any, str | None]]:
    cases: list[tuple[str, str, Any, str | None]] = []

    def add(name: str, value: Any, python: str | None = None) -> None:
        cases.append((name, "value", value, python))

    def add_raw(name: str, data: bytes, python: str) -> None:
        cases.append((name, "raw", data, python))

    # ---- plain tags -----------------------------------------------------------
    add("null", None)
    add("bytes_empty", b"")
    add("bytes_small", b"\x00\x01\x02hello\xff")
    add("bytes_msgpack_lookalike", b"\x93\x01\x02\x03")
    add("bytes_1k", bytes(range(256)) * 4)
    add("bytearray_empty", bytearray())
    add("bytearray_small", bytearray(b"\xde\xad\xbe\xef"))

    # ---- scalars --------------------------------------------------------------
    add("bool_true", True)
    add("bool_false", False)
    ints = {
        "0": 0, "1": 1, "127": 127, "128": 128, "255": 255, "256": 256,
        "65535": 65535, "65536": 65536, "2p32m1": 2**32 - 1, "2p32": 2**32,
        "2p63m1": 2**63 - 1, "2p63": 2**63, "2p64m1": 2**64 - 1,
        "m1": -1, "m32": -32, "m33": -33, "m128": -128, "m129": -129,
        "m32768": -32768, "m32769": -32769, "m2p31": -(2**31), "m2p31m1": -(2**31) - 1,
        "m2p63": -(2**63),
    }
    for k, v in ints.items():
        add(f"int_{k}", v)
    floats = {
        "0": 0.0, "neg0": -0.0, "1_5": 1.5, "0_1": 0.1, "neg_2_5": -2.5,
        "nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"),
        "1e308": 1e308, "5em324": 5e-324, "max": 1.7976931348623157e308,
    }
    for k, v in floats.items():
        add(f"float_{k}", v)

    # ---- strings --------------------------------------------------------------
    add("str_empty", "")
    add("str_ascii", "hello")
    for n in (31, 32, 255, 256, 65535, 65536):
        add(f"str_len_{n}", "s" * n, f"'s' * {n}")
    add("str_nonascii_2byte", "é" * 16, "'é' * 16  # 32 utf-8 bytes -> str8")
    add("str_nonascii_mixed", "héllo wörld ñ ß € 你好 こんにちは")
    add("str_emoji", "🦜🔗 parrot+link 👩‍👩‍👧‍👦")
    add("str_emoji_str8_boundary", "🦜" * 8, "'🦜' * 8  # 32 utf-8 bytes")
    add("str_control_chars", "\x00\x01\n\t\r\x7f\u2028")
    add("str_lone_surrogate", "a\ud800b\udfffc", "'a\\ud800b\\udfffc'  # surrogates written as '?'")

    # ---- bin (nested, so the tag is msgpack) ----------------------------------
    for n in (0, 1, 255, 256, 65535, 65536):
        add(f"bin_len_{n}", [bytes([i % 251 for i in range(n)])], f"[bytes(i % 251 for i in range({n}))]")
    add("bin_in_dict", {"raw": b"\x00\xff", "arr": bytearray(b"ba")})

    # ---- arrays ---------------------------------------------------------------
    add("array_empty", [])
    add("tuple_empty", ())
    for n in (1, 15, 16, 65535, 65536):
        add(f"array_len_{n}", [0] * n, f"[0] * {n}")
    add("tuple_mixed", (1, "a", None, 2.5, True))
    add("array_mixed", [1, "two", 3.0, None, False, [], {}, [1, [2, [3]]]])
    nested: Any = "bottom"
    for _ in range(255):
        nested = [nested]
    add("array_nested_255", nested, "[[...255 levels (the most ormsgpack writes)...['bottom']]]")
    nested_map: Any = 0
    for i in range(255):
        nested_map = {"k": nested_map} if i % 2 else {i: nested_map}
    add("map_nested_255", nested_map, "{254: {'k': {252: ...255 levels...}}}")

    # ---- maps -----------------------------------------------------------------
    add("map_empty", {})
    for n in (1, 15, 16, 65535, 65536):
        add(f"map_len_{n}", {i: None for i in range(n)}, f"{{i: None for i in range({n})}}")
    add("map_str_keys_16", {f"key{i:02}": i for i in range(16)})
    add("map_insertion_order", {"z": 1, "a": 2, "m": 3, "b": 4})
    add("map_key_int", {1: "one", -1: "minus one", 2**40: "big", 0: "zero"})
    add("map_key_float", {1.5: "a", -0.0: "b", float("inf"): "c"})
    add("map_key_bool", {True: "t", False: "f"})
    add("map_key_none", {None: "none", "x": 1})
    add("map_key_tuple", {(1, 2): "pair", ("a", ("b", 3)): "nested", (): "empty"})
    add("map_key_mixed", {"s": 1, 2: 2, 3.5: 3, None: 4, True: 5, (6,): 6})
    add("map_key_uuid", {u(1): "uuid key"})
    add("map_key_datetime", {datetime(2024, 1, 2, 3, 4, 5): "dt key"})
    add("map_key_enum", {pytypes.Color.RED: 1, pytypes.Mode.FAST: 2})
    add("map_nested", {"a": {"b": {"c": {"d": [1, {"e": None}]}}}})

    # ---- ext 0: CONSTRUCTOR_SINGLE_ARG ----------------------------------------
    add("uuid_v4", UUID("12345678-1234-4678-9234-567812345678"))
    add("uuid_nil", UUID(int=0))
    add("uuid_max", UUID(int=2**128 - 1))
    add("uuid_v1", UUID("1ef4f797-8335-11ef-8001-8a1503f9b875"))
    for s in ("1.10", "0", "-0", "NaN", "-NaN", "sNaN", "Infinity", "-Infinity", "1E+3", "-1.5E-7", "3.14159265358979323846264338327950288"):
        name = s.replace("-", "neg").replace("+", "p").replace(".", "_").lower()
        add(f"decimal_{name}", Decimal(s))
    add("set_empty", set())
    add("set_ints", {3, 1, 2, 100, -5})
    add("set_strs", {"a", "b", "c"})
    add("set_mixed", {1, "x", (1, 2), None, 2.5})
    add("frozenset_ints", frozenset({1, 2, 3}))
    add("frozenset_empty", frozenset())
    add("deque_empty", deque())
    add("deque_mixed", deque([1, "a", [2, 3], {"k": "v"}]))
    add("deque_maxlen", deque([1, 2, 3], maxlen=5))
    add("ipv4_address", IPv4Address("192.168.1.1"))
    add("ipv4_interface", IPv4Interface("10.0.0.5/24"))
    add("ipv4_network", IPv4Network("10.0.0.0/8"))
    add("ipv6_address", IPv6Address("2001:db8::1"))
    add("ipv6_interface", IPv6Interface("2001:db8::1/64"))
    add("ipv6_network", IPv6Network("2001:db8::/32"))
    add("zoneinfo_utc", ZoneInfo("UTC"))
    add("zoneinfo_paris", ZoneInfo("Europe/Paris"))
    add("zoneinfo_kolkata", ZoneInfo("Asia/Kolkata"))
    add("enum_str", pytypes.Color.RED)
    add("enum_int", pytypes.Color.BLUE)
    add("enum_tuple_value", pytypes.Color.TUPLE)
    add("intenum", pytypes.Priority.HIGH)
    add("intenum_big", pytypes.Priority.HUGE)
    add("strenum", pytypes.Mode.FAST)
    add("strenum_unicode", pytypes.Mode.UNICODE)
    add("secretstr", pydantic.SecretStr("hunter2"), "SecretStr('hunter2')")
    add("secretbytes", pydantic.SecretBytes(b"\x00secret"), "SecretBytes(b'\\x00secret')")

    # ---- ext 1: CONSTRUCTOR_POS_ARGS ------------------------------------------
    add("timedelta_zero", timedelta(0))
    add("timedelta_simple", timedelta(days=1, seconds=2, microseconds=3))
    add("timedelta_negative", timedelta(seconds=-1))
    add("timedelta_neg_days", timedelta(days=-3, hours=5))
    add("timedelta_big", timedelta(days=999999999, seconds=86399, microseconds=999999))
    add("timedelta_min", timedelta.min)
    add("date_simple", date(2024, 2, 29))
    add("date_min", date.min)
    add("date_max", date.max)
    add("timezone_utc", timezone.utc)
    add("timezone_offset_named", timezone(timedelta(hours=5, minutes=30), "IST"))
    add("timezone_offset_unnamed", timezone(timedelta(hours=2)))
    add("timezone_negative", timezone(timedelta(hours=-8)))
    add("timezone_negative_named", timezone(-timedelta(hours=3, minutes=30), "NST"))
    add("timezone_with_seconds", timezone(timedelta(hours=1, seconds=15)))
    add("timezone_with_microseconds", timezone(timedelta(seconds=1, microseconds=7)))
    add("posix_path_abs", pathlib.PosixPath("/usr/local/lib/python3.11"))
    add("posix_path_rel", pathlib.PosixPath("data/file.txt"))
    add("path_unicode", pathlib.Path("/tmp/ünï/🦜.json"))
    add("path_dot", pathlib.Path("."))
    add("regex_simple", re.compile(r"^a+b*$"))
    add("regex_flags", re.compile(r"hello\s+world", re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE))
    add("regex_ascii_flag", re.compile(r"\w+", re.ASCII))
    add("regex_bytes", re.compile(rb"\x00[a-z]+"))
    add("send_simple", Send("worker", {"item": 1}))
    add("send_str_arg", Send("node_b", "payload"))
    add("send_none_arg", Send("n", None))
    add("send_timeout_float", Send("worker", {"x": 1}, timeout=5))
    add("send_timeout_timedelta", Send("worker", [1, 2], timeout=timedelta(seconds=90)))
    add("send_timeout_policy", Send("worker", {}, timeout=TimeoutPolicy(run_timeout=10.0, idle_timeout=2.5, refresh_on="heartbeat")))
    add("send_list", [Send("a", 1), Send("b", {"k": [1, 2]}), Send("c", HumanMessage("m", id="sm1"))])

    # ---- ext 2: CONSTRUCTOR_KW_ARGS -------------------------------------------
    add("time_naive", time(12, 30, 45))
    add("time_midnight", time(0, 0))
    add("time_microsecond", time(23, 59, 59, 999999))
    add("time_aware_utc", time(8, 0, tzinfo=timezone.utc))
    add("time_aware_offset", time(8, 0, 1, 5, tzinfo=timezone(timedelta(hours=-5), "EST")))
    add("time_aware_zoneinfo", time(9, 15, tzinfo=ZoneInfo("America/New_York")))
    add("time_fold1", time(1, 30, fold=1))
    add("interrupt_default_id", Interrupt("need input"))
    add("interrupt", Interrupt(value={"question": "approve?", "options": ["y", "n"]}, id="a1b2c3d4e5f60718293a4b5c6d7e8f90"))
    add("interrupt_list", [Interrupt("q1", id="i1"), Interrupt(["q", 2], id="i2")])
    add("command_update", Command(update={"messages": [AIMessage("cmd", id="ca1")], "n": 1}))
    add("command_resume", Command(resume="yes"))
    add("command_resume_map", Command(resume={"a1b2c3d4": {"answer": 42}}))
    add("command_goto_str", Command(goto="node_x"))
    add("command_goto_send", Command(goto=[Send("worker", {"i": 1}), "other"], update=[("k", "v")]))
    add("command_parent", Command(graph=Command.PARENT, goto="parent_node", update={"x": 1}))
    add("timeout_policy", TimeoutPolicy(run_timeout=1.5, idle_timeout=None, refresh_on="auto"))
    add("overwrite", Overwrite([1, 2, 3]))
    created = datetime(2024, 3, 4, 5, 6, 7, 890123, tzinfo=timezone.utc)
    add("store_item", Item(value={"doc": "hello", "n": 1}, key="k1", namespace=("users", "u1"), created_at=created, updated_at=created + timedelta(minutes=5)))
    add("store_item_naive_dt", Item(value={}, key="", namespace=(), created_at=datetime(2020, 1, 1), updated_at=datetime(2020, 1, 2)))
    add("namedtuple", pytypes.Point(1, 2))
    add("namedtuple_nested", pytypes.Point(x=[1, 2], y=pytypes.Point("a", None)))
    add("typed_namedtuple", pytypes.Span(3, 7))
    add("dataclass_simple", pytypes.Simple(1))
    add("dataclass_full", pytypes.Simple(2, "bee", 2.5))
    add("dataclass_frozen", pytypes.Frozen("k", (1, 2)))
    add("dataclass_nested", pytypes.Nested("n", pytypes.Simple(3), ["t1", "t2"], pytypes.Color.GREEN, {"when": date(2024, 1, 1)}))
    add("dataclass_empty", pytypes.Empty())

    # ---- ext 3: METHOD_SINGLE_ARG (datetime) ----------------------------------
    add("datetime_naive", datetime(2024, 1, 2, 3, 4, 5))
    add("datetime_naive_micro", datetime(2024, 1, 2, 3, 4, 5, 123456))
    add("datetime_naive_micro_small", datetime(2024, 1, 2, 3, 4, 5, 1))
    add("datetime_utc", datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    add("datetime_utc_micro", datetime(2024, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc))
    add("datetime_ist", datetime(2024, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=5, minutes=30))))
    add("datetime_negative_offset", datetime(2024, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=-7))))
    add("datetime_offset_seconds", datetime(2024, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=1, seconds=15))))
    add("datetime_offset_microseconds", datetime(2024, 6, 1, 12, 0, 0, 5, tzinfo=timezone(timedelta(seconds=30, microseconds=250))))
    add("datetime_zoneinfo_paris_winter", datetime(2024, 1, 15, 9, 0, tzinfo=ZoneInfo("Europe/Paris")))
    add("datetime_zoneinfo_paris_summer", datetime(2024, 7, 15, 9, 0, tzinfo=ZoneInfo("Europe/Paris")))
    add("datetime_zoneinfo_ny_fold", datetime(2024, 11, 3, 1, 30, fold=1, tzinfo=ZoneInfo("America/New_York")))
    add("datetime_min", datetime.min)
    add("datetime_max", datetime.max)
    add("datetime_fold1_naive", datetime(2024, 11, 3, 1, 30, fold=1))

    # ---- ext 4/5: pydantic ----------------------------------------------------
    add("pydantic_v2", pytypes.ModelV2(name="m", count=3, tags=["a", "b"], meta={"k": [1, 2]}))
    add("pydantic_v2_defaults", pytypes.ModelV2(name="d"))
    add("pydantic_v2_nested", pytypes.OuterV2(id="o1", child=pytypes.ModelV2(name="c"), children=[pytypes.ModelV2(name="c2", maybe=7)]))
    add("pydantic_v1", pytypes.ModelV1(name="v1", count=2, tags=["x"]))
    add("pydantic_v1_defaults", pytypes.ModelV1(name="v1d"))
    add("document", Document(page_content="doc text", metadata={"source": "s.txt", "page": 2}, id="doc1"))

    # LangChain messages (ext 5)
    msgs = _messages()
    for name, m in msgs.items():
        add(name, m)
    add("messages_list", [msgs["msg_system"], msgs["msg_human"], msgs["msg_ai_tool_calls"], msgs["msg_tool"]])

    # ---- ext 6: numpy -----------------------------------------------------------
    add("np_int64_1d", np.arange(5, dtype="<i8"))
    add("np_float64_2d_c", np.arange(6, dtype="<f8").reshape(2, 3))
    add("np_float64_2d_fortran", np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3)))
    add("np_int32_noncontig_slice", np.arange(20, dtype="<i4").reshape(4, 5)[:, ::2])
    add("np_int16_transposed", np.arange(12, dtype="<i2").reshape(3, 4).T)
    add("np_0d_float", np.array(3.5))
    add("np_0d_int", np.array(7, dtype="<i4"))
    add("np_empty", np.zeros((0,), dtype="<f4"))
    add("np_empty_2d", np.zeros((2, 0), dtype="<i8"))
    add("np_bool", np.array([True, False, True]))
    add("np_int8", np.array([-128, -1, 0, 1, 127], dtype="i1"))
    add("np_uint8", np.array([0, 1, 255], dtype="u1"))
    add("np_u2_le", np.array([1, 2, 65535], dtype="<u2"))
    add("np_i4_be", np.array([1, -2, 2**31 - 1], dtype=">i4"))
    add("np_float32", np.array([1.5, -0.0, np.inf, np.nan], dtype="<f4"))
    add("np_float64", np.array([1e308, 5e-324, -1.0], dtype="<f8"))
    add("np_complex128", np.array([1 + 2j, -0.5j], dtype="<c16"))
    add("np_3d", np.arange(24, dtype="<u4").reshape(2, 3, 4))
    add("np_in_dict", {"embedding": np.linspace(0, 1, 8, dtype="<f4"), "label": "x"})
    add("np_large_ext32", np.arange(10000, dtype="<f8"), "np.arange(10000, dtype='<f8')  # 80 kB -> ext32")

    # ---- ext 7: delta snapshot, incl. ext size families -------------------------
    add("delta_fixext1_int", _DeltaSnapshot(1))
    add("delta_fixext1_none", _DeltaSnapshot(None))
    add("delta_fixext2_int", _DeltaSnapshot(200))
    add("delta_ext8_3", _DeltaSnapshot("ab"))
    add("delta_fixext4_str", _DeltaSnapshot("abc"))
    add("delta_ext8_5", _DeltaSnapshot(2**31))
    add("delta_fixext8_str", _DeltaSnapshot("abcdefg"))
    add("delta_ext8_9", _DeltaSnapshot(2**63))
    add("delta_fixext16_str", _DeltaSnapshot("a" * 15))
    add("delta_ext8_17", _DeltaSnapshot("a" * 16))
    add("delta_ext8_255", _DeltaSnapshot(b"x" * 253), "_DeltaSnapshot(b'x' * 253)  # payload 255")
    add("delta_ext16_256", _DeltaSnapshot(b"x" * 254), "_DeltaSnapshot(b'x' * 254)  # payload 256")
    add("delta_ext16_65535", _DeltaSnapshot(b"x" * 65532), "_DeltaSnapshot(b'x' * 65532)  # payload 65535")
    add("delta_ext32_65536", _DeltaSnapshot(b"x" * 65533), "_DeltaSnapshot(b'x' * 65533)  # payload 65536")
    add("delta_list", _DeltaSnapshot([1, 2, 3, "four"]))
    add("delta_dict", _DeltaSnapshot({"a": 1, "b": [True, None]}))
    add("delta_messages", _DeltaSnapshot([msgs["msg_human"], msgs["msg_ai_tool_calls"], msgs["msg_tool"]]))
    add("delta_nested", _DeltaSnapshot(_DeltaSnapshot({1, 2})))

    # ---- exceptions ---------------------------------------------------------------
    add("exception_value_error", ValueError("x"))
    add("exception_key_error", KeyError("missing"))
    add("exception_custom", pytypes.CustomError("custom", 42))
    add("exception_no_args", RuntimeError())

    # ---- realistic nested mixtures -----------------------------------------------
    add(
        "state_mixture",
        {
            "messages": [msgs["msg_human"], msgs["msg_ai_tool_calls"], msgs["msg_tool"], msgs["msg_ai"]],
            "updated": datetime(2024, 5, 6, 7, 8, 9, 101112, tzinfo=timezone.utc),
            "seen": {1, 2, 3},
            "sends": [Send("worker", {"i": i}) for i in range(3)],
            "id": u(42),
            "cost": Decimal("0.0042"),
            "elapsed": timedelta(seconds=1.5),
            "tags": frozenset({"x"}),
            "point": pytypes.Point(0, 0),
            "cfg": pytypes.Simple(1),
            "none": None,
            "blob": b"\x00\x01",
        },
        None,
    )
    add(
        "checkpoint_like",
        {
            "v": 4,
            "id": "1ef4f797-8335-6428-8001-8a1503f9b875",
            "ts": "2024-07-31T12:00:00.000000+00:00",
            "channel_values": {"messages": [msgs["msg_human"]], "__start__": {"messages": "hi"}},
            "channel_versions": {"__start__": "00000000000000000000000000000001.0.5", "messages": "00000000000000000000000000000002.0.7"},
            "versions_seen": {"__input__": {}, "agent": {"messages": "00000000000000000000000000000002.0.7"}},
            "updated_channels": ["messages"],
        },
    )
    add(
        "metadata_like",
        {"source": "loop", "step": 1, "parents": {"": "1ef4f797-8335-6428-8001-8a1503f9b875"}, "run_id": "run-1", "counters_since_delta_snapshot": {"messages": [1, 2]}},
    )
    add("write_interrupt_list", [Interrupt({"q": "ok?"}, id="int-1")])
    add("write_tasks_sends", [Send("a", {"x": 1}), Send("b", {"x": 2})])

    # ---- json tag ---------------------------------------------------------------------
    for name, data, obj in _json_cases():
        cases.append((name, "json", data, repr(obj)))

    # ---- raw / malformed ext (Python decodes these to None or raw data) -------------------
    add_raw("raw_ext99_unknown", ext(99, b"\x01\x02\x03"), "Ext(99, b'\\x01\\x02\\x03')")
    add_raw("raw_ext8_unknown_code", ext(8, ormsgpack.packb(["a", 1])), "Ext(8, packb(['a', 1]))")
    add_raw("raw_ext127", ext(127, b""), "Ext(127, b'')")
    add_raw("raw_ext99_in_map", ormsgpack.packb({"a": ormsgpack.Ext(99, b"zz"), "b": 1}), "{'a': Ext(99, b'zz'), 'b': 1}")
    add_raw("malformed_ext0_two_tuple", ext(0, ormsgpack.packb(("uuid", "UUID"))), "Ext(0, packb(('uuid', 'UUID')))")
    add_raw("malformed_ext0_bad_arg", ext(0, ormsgpack.packb(("uuid", "UUID", "not-hex"))), "Ext(0, packb(('uuid', 'UUID', 'not-hex')))")
    add_raw("malformed_ext0_missing_module", ext(0, ormsgpack.packb(("no_such_module_xyz", "Thing", 1))), "Ext(0, packb(('no_such_module_xyz', 'Thing', 1)))")
    add_raw("malformed_ext0_garbage", ext(0, b"\xc1\xc1"), "Ext(0, b'\\xc1\\xc1')")
    add_raw("malformed_ext1_args_not_list", ext(1, ormsgpack.packb(("datetime", "date", 5))), "Ext(1, packb(('datetime', 'date', 5)))")
    add_raw("malformed_ext2_kwargs_not_map", ext(2, ormsgpack.packb(("datetime", "time", [1, 2]))), "Ext(2, packb(('datetime', 'time', [1, 2])))")
    add_raw("malformed_ext3_bad_iso", ext(3, ormsgpack.packb(("datetime", "datetime", "not a date", "fromisoformat"))), "Ext(3, packb(('datetime', 'datetime', 'not a date', 'fromisoformat')))")
    add_raw("malformed_ext3_unsafe_method", ext(3, ormsgpack.packb(("os", "system", "true", "__call__"))), "Ext(3, packb(('os', 'system', 'true', '__call__')))")
    add_raw("malformed_ext4_garbage", ext(4, b"\xff\x00garbage"), "Ext(4, b'\\xff\\x00garbage')")
    add_raw("malformed_ext4_not_msgpack", ext(4, b"\xc1"), "Ext(4, b'\\xc1')")
    add_raw("malformed_ext5_scalar_payload", ext(5, ormsgpack.packb(1)), "Ext(5, packb(1))")
    add_raw("malformed_ext5_garbage", ext(5, b"\xc1garbage"), "Ext(5, b'\\xc1garbage')")
    add_raw("malformed_ext5_unknown_class", ext(5, ormsgpack.packb(("no_such_module_xyz", "Model", {"a": 1}, "model_validate_json"))), "Ext(5, packb(('no_such_module_xyz', 'Model', {'a': 1}, 'model_validate_json')))")
    add_raw("malformed_ext6_wrong_shape", ext(6, ormsgpack.packb(("<f8", [3], "C", b"\x00" * 16))), "Ext(6, packb(('<f8', [3], 'C', b'\\x00' * 16)))")
    add_raw("malformed_ext6_three_tuple", ext(6, ormsgpack.packb(("<f8", [1], "C"))), "Ext(6, packb(('<f8', [1], 'C')))")
    add_raw("malformed_ext6_bad_dtype", ext(6, ormsgpack.packb(("<zz", [1], "C", b"\x00"))), "Ext(6, packb(('<zz', [1], 'C', b'\\x00')))")
    add_raw("malformed_ext7_garbage", ext(7, b"\xc1"), "Ext(7, b'\\xc1')")
    add_raw("trailing_bytes_after_value", ormsgpack.packb(1) + b"\x02\x03", "packb(1) + b'\\x02\\x03'  # Python ignores trailing bytes")
    return cases


def unit_rows() -> list[dict]:
    rows = []
    seen = set()
    for name, kind, value, python in build_unit_cases():
        assert name not in seen, name
        seen.add(name)
        if kind == "value":
            typ, data = SERDE.dumps_typed(value)
        elif kind == "json":
            typ, data = "json", value
        elif kind == "raw":
            typ, data = "msgpack", value
        else:  # pragma: no cover
            raise ValueError(kind)
        if python is None:
            python = repr(value)
        rows.append({"name": name, "type": typ, "data": b64(data), "python": python[:200]})
    return rows


# =============================================================================
# benchmark payloads
# =============================================================================


def build_payloads() -> dict[str, bytes]:
    messages = []
    for i in range(100):
        messages.append(HumanMessage(f"question {i} " + "lorem ipsum " * 20, id=f"h{i}"))
        messages.append(
            AIMessage(
                f"answer {i} " + "dolor sit amet " * 30,
                id=f"a{i}",
                tool_calls=[{"name": "search", "args": {"q": f"q{i}", "k": 5}, "id": f"c{i}"}],
            )
        )
        messages.append(ToolMessage("result " * 40, tool_call_id=f"c{i}", id=f"t{i}"))
    typ, messages300 = SERDE.dumps_typed({"messages": messages})
    assert typ == "msgpack"

    def version(n: int, j: int) -> str:
        return f"{n:032}.{(j + 1) / 1024:016}"

    channels = [f"channel_{j:02}" for j in range(20)]
    checkpoint = {
        "v": 4,
        "id": "1f000000-0000-6000-8000-000000000001",
        "ts": "2025-01-01T00:00:00.000000+00:00",
        "channel_values": {"records": [{"k": i, "s": "x" * 50, "f": i * 1.5} for i in range(2000)]},
        "channel_versions": {ch: version(j + 1, j) for j, ch in enumerate(channels)},
        "versions_seen": {f"node_{n}": {channels[(n + m) % 20]: version(m + 1, n) for m in range(5)} for n in range(10)},
        "updated_channels": channels[:5],
    }
    typ, checkpoint_plain = SERDE.dumps_typed(checkpoint)
    assert typ == "msgpack"

    blob = random.Random(20240601).randbytes(1 << 20)
    typ, blob_data = SERDE.dumps_typed(blob)
    assert typ == "bytes" and blob_data == blob
    return {
        "messages300.msgpack": messages300,
        "checkpoint_plain.msgpack": checkpoint_plain,
        "blob_1mib.bin": blob,
    }


# =============================================================================
# graph runs
# =============================================================================


def _graph_messages(checkpointer):
    """(1) messages + add_messages + interrupt() then resume."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.types import interrupt

    class State(TypedDict):
        messages: Annotated[list, add_messages]
        approved: bool
        when: datetime

    def agent(state: State):
        n = len(state["messages"])
        return {
            "messages": [
                AIMessage(
                    "let me check",
                    id=f"ai-{n}",
                    tool_calls=[{"name": "lookup", "args": {"q": "x", "n": n}, "id": f"call-{n}", "type": "tool_call"}],
                    usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
                )
            ],
            "when": datetime(2024, 1, 1, 12, 0, tzinfo=timezone.utc),
        }

    def review(state: State):
        answer = interrupt({"question": "approve tool call?", "call": state["messages"][-1].tool_calls[0]})
        return {
            "approved": answer == "yes",
            "messages": [HumanMessage(f"reviewer said {answer}", id="review-1")],
        }

    def tool(state: State):
        return {"messages": [ToolMessage("42", tool_call_id="call-1", id="tool-1", artifact={"raw": 42})]}

    b = StateGraph(State)
    b.add_node("agent", agent)
    b.add_node("review", review)
    b.add_node("tool", tool)
    b.add_edge(START, "agent")
    b.add_edge("agent", "review")
    b.add_edge("review", "tool")
    b.add_edge("tool", END)
    g = b.compile(checkpointer=checkpointer)
    cfg = {"configurable": {"thread_id": "thread-messages"}}
    g.invoke({"messages": [SystemMessage("be brief", id="sys-1"), HumanMessage("hi", id="human-1")]}, cfg)
    g.invoke(Command(resume="yes"), cfg)
    return g


def _graph_send(checkpointer):
    """(2) Send fan-out map-reduce."""
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        items: list
        results: Annotated[list, operator.add]
        total: int

    class Task(TypedDict):
        item: int

    def fan_out(state: State):
        return [Send("worker", {"item": i}) for i in state["items"]]

    def worker(task: Task):
        return {"results": [task["item"] * task["item"]]}

    def reduce(state: State):
        return {"total": sum(sorted(state["results"]))}

    b = StateGraph(State)
    b.add_node("worker", worker)
    b.add_node("reduce", reduce)
    b.add_conditional_edges(START, fan_out, ["worker"])
    b.add_edge("worker", "reduce")
    b.add_edge("reduce", END)
    g = b.compile(checkpointer=checkpointer)
    g.invoke({"items": [1, 2, 3, 4], "results": []}, {"configurable": {"thread_id": "thread-send"}})


def _graph_subgraph(checkpointer):
    """(3) parent graph with a subgraph node (checkpointer shared)."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class SubState(TypedDict):
        text: str
        steps: Annotated[list, operator.add]

    def sub_a(state: SubState):
        return {"text": state["text"].upper(), "steps": ["sub_a"]}

    def sub_b(state: SubState):
        ok = interrupt("confirm sub_b")
        return {"text": state["text"] + f"!{ok}", "steps": ["sub_b"]}

    sb = StateGraph(SubState)
    sb.add_node("sub_a", sub_a)
    sb.add_node("sub_b", sub_b)
    sb.add_edge(START, "sub_a")
    sb.add_edge("sub_a", "sub_b")
    sb.add_edge("sub_b", END)
    sub = sb.compile()

    def prepare(state: SubState):
        return {"text": state["text"] + " world", "steps": ["prepare"]}

    def finish(state: SubState):
        return {"steps": ["finish"]}

    pb = StateGraph(SubState)
    pb.add_node("prepare", prepare)
    pb.add_node("child", sub)
    pb.add_node("finish", finish)
    pb.add_edge(START, "prepare")
    pb.add_edge("prepare", "child")
    pb.add_edge("child", "finish")
    pb.add_edge("finish", END)
    g = pb.compile(checkpointer=checkpointer)
    cfg = {"configurable": {"thread_id": "thread-subgraph"}}
    g.invoke({"text": "hello", "steps": []}, cfg)
    g.invoke(Command(resume="ok"), cfg)


def _graph_delta(checkpointer):
    """(4) DeltaChannel (beta) with snapshot_frequency=2: writes _DeltaSnapshot blobs."""
    from langgraph.channels.delta import DeltaChannel
    from langgraph.graph import END, START, StateGraph

    def extend(state, writes):
        out = list(state or [])
        for w in writes:
            out.extend(w if isinstance(w, list) else [w])
        return out

    class State(TypedDict):
        log: Annotated[list, DeltaChannel(extend, snapshot_frequency=2)]
        n: int

    def step(state: State):
        return {"log": [f"entry-{state['n']}"], "n": state["n"] + 1}

    def route(state: State):
        return "step" if state["n"] < 5 else END

    b = StateGraph(State)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", route, ["step", END])
    g = b.compile(checkpointer=checkpointer)
    g.invoke({"log": ["start"], "n": 0}, {"configurable": {"thread_id": "thread-delta"}})


def saver_rows(saver) -> list[dict]:
    """Every row of an InMemorySaver's storage, as (table, key, (type, bytes))."""
    rows: list[dict] = []
    for thread_id in sorted(saver.storage):
        for ns in sorted(saver.storage[thread_id]):
            for cid in sorted(saver.storage[thread_id][ns]):
                ckpt, meta, parent = saver.storage[thread_id][ns][cid]
                key = json.dumps([cid, parent])
                rows.append({"table": "checkpoint", "thread_id": thread_id, "checkpoint_ns": ns, "key": key, "tv": ckpt})
                rows.append({"table": "metadata", "thread_id": thread_id, "checkpoint_ns": ns, "key": key, "tv": meta})
    for (thread_id, ns, channel, version) in sorted(saver.blobs, key=lambda k: tuple(map(str, k))):
        rows.append(
            {
                "table": "blob",
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "key": json.dumps([channel, version]),
                "tv": saver.blobs[(thread_id, ns, channel, version)],
            }
        )
    for (thread_id, ns, cid) in sorted(saver.writes):
        inner = saver.writes[(thread_id, ns, cid)]
        for (task_id, idx) in sorted(inner, key=lambda k: (inner[k][3], k[0], k[1])):
            t_id, channel, tv, task_path = inner[(task_id, idx)]
            rows.append(
                {
                    "table": "write",
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "key": json.dumps([cid, task_id, idx, channel, task_path]),
                    "tv": tv,
                }
            )
    return rows


def graph_rows() -> list[dict]:
    from langgraph.checkpoint.memory import InMemorySaver

    out: list[dict] = []
    for label, fn in (("messages", _graph_messages), ("send", _graph_send), ("subgraph", _graph_subgraph), ("delta", _graph_delta)):
        saver = InMemorySaver()
        fn(saver)
        for i, r in enumerate(saver_rows(saver)):
            typ, data = r["tv"]
            out.append(
                {
                    "name": f"{label}_{r['table']}_{i:03}",
                    "table": r["table"],
                    "thread_id": r["thread_id"],
                    "checkpoint_ns": r["checkpoint_ns"],
                    "key": r["key"],
                    "type": typ,
                    "data": b64(data),
                }
            )
    return out


# =============================================================================
# encrypted
# =============================================================================


def encrypted_serde(key: str, mode: str):
    from Crypto.Cipher import AES
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    if mode == "eax":
        return EncryptedSerializer.from_pycryptodome_aes(key=key.encode())
    if mode == "gcm":
        return EncryptedSerializer.from_pycryptodome_aes(key=key.encode(), mode=AES.MODE_GCM)
    raise ValueError(mode)


def _encrypted_unit_values() -> list[tuple[str, Any]]:
    msgs = _messages()
    return [
        ("null", None),
        ("bytes_empty", b""),
        ("bytes", b"\x00secret bytes\xff"),
        ("bytearray", bytearray(b"ba")),
        ("int", 42),
        ("str", "héllo 🦜"),
        ("dict", {"a": 1, "b": [1, 2, {"c": None}], "d": 2.5}),
        ("big_str", "x" * 5000),
        ("datetime", datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc)),
        ("uuid", u(7)),
        ("set", {1, 2, 3}),
        ("human", msgs["msg_human"]),
        ("ai_tool_calls", msgs["msg_ai_tool_calls"]),
        ("messages_state", {"messages": [msgs["msg_system"], msgs["msg_human"], msgs["msg_ai"]]}),
        ("send", Send("worker", {"i": 1})),
        ("np", np.arange(4, dtype="<i4")),
    ]


def encrypted_rows() -> list[dict]:
    from langgraph.checkpoint.memory import InMemorySaver

    out: list[dict] = []
    for mode in ("eax", "gcm"):
        for klen, key in AES_KEYS.items():
            enc = encrypted_serde(key, mode)
            for name, value in _encrypted_unit_values():
                typ, data = enc.dumps_typed(value)
                ptyp, pdata = SERDE.dumps_typed(value)
                assert typ == f"{ptyp}+aes"
                assert enc.cipher.decrypt("aes", data) == pdata
                out.append(
                    {
                        "name": f"{mode}{klen}_{name}",
                        "key": key,
                        "mode": mode,
                        "type": typ,
                        "data": b64(data),
                        "plain_type": ptyp,
                        "plain_data": b64(pdata),
                    }
                )
    # one encrypted graph run per mode
    for mode, key in (("eax", AES_KEYS[32]), ("gcm", AES_KEYS[16])):
        enc = encrypted_serde(key, mode)
        saver = InMemorySaver(serde=enc)
        _graph_messages(saver)
        for i, r in enumerate(saver_rows(saver)):
            typ, data = r["tv"]
            if "+" in typ:
                ptyp, cname = typ.split("+", 1)
                assert cname == "aes"
                pdata = enc.cipher.decrypt(cname, data)
            else:  # e.g. "empty" blobs: written by the saver itself, not encrypted
                ptyp, pdata = typ, data
            out.append(
                {
                    "name": f"graph_{mode}_{r['table']}_{i:03}",
                    "key": key,
                    "mode": mode,
                    "type": typ,
                    "data": b64(data),
                    "plain_type": ptyp,
                    "plain_data": b64(pdata),
                }
            )
    return out


# =============================================================================
# main
# =============================================================================


def write_unit() -> None:
    rows = unit_rows()
    write_bytes(UNIT_PATH, render_jsonl(rows))
    print(f"unit.jsonl: {len(rows)} cases")
    for name, data in build_payloads().items():
        write_bytes(os.path.join(PAYLOAD_DIR, name), data)
        print(f"payloads/{name}: {len(data)} bytes")


def write_graph() -> None:
    rows = graph_rows()
    write_bytes(GRAPH_PATH, render_jsonl(rows))
    print(f"graph_rows.jsonl: {len(rows)} rows")


def write_encrypted() -> None:
    rows = encrypted_rows()
    write_bytes(ENCRYPTED_PATH, render_jsonl(rows))
    print(f"encrypted.jsonl: {len(rows)} rows")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", action="append", choices=["unit", "graph", "encrypted"], help="regenerate only these files (repeatable)")
    args = p.parse_args(argv)
    only = set(args.only or ["unit", "graph", "encrypted"])
    if "unit" in only:
        write_unit()
    if "graph" in only:
        write_graph()
    if "encrypted" in only:
        write_encrypted()
    return 0


if __name__ == "__main__":
    sys.exit(main())
