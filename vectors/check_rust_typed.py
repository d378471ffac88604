"""Checks the vectors the Rust typed layer wrote (vectors/rust_typed.jsonl) with the real
langgraph-checkpoint 4.3.2.

For every vector: the Python value it must equal is built here from first principles
(never from the Rust output); the Rust bytes are decoded with JsonPlusSerializer
(allowing all modules) and compared with that value, and the Rust bytes are compared
with the bytes Python itself writes for that value (`dumps_typed`).

Usage: .venv/bin/python vectors/check_rust_typed.py [vectors/rust_typed.jsonl]
Prints "N passed, 0 failed"; exits 1 on any failure.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import ipaddress
import json
import math
import pathlib
import re
import sys
import uuid
import logging
import zoneinfo
from collections import deque

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402
from langgraph.checkpoint.serde.types import _DeltaSnapshot  # noqa: E402
from langgraph.types import Command, Interrupt, Send, TimeoutPolicy  # noqa: E402

import pytypes as pt  # noqa: E402

SERDE = JsonPlusSerializer(allowed_msgpack_modules=True)

# Sets of strings iterate in hash order, which Python randomises per process: Python's
# own bytes for them vary from run to run, so only the decoded values are compared.
HASH_ORDERED = {"set_strs"}

td = dt.timedelta
UTC = dt.timezone.utc


def search_call():
    return {"name": "search", "args": {"q": "weather in Paris", "k": 3}, "id": "call_1", "type": "tool_call"}


def ai_with_tool_calls():
    return AIMessage(
        content="",
        id="a2",
        tool_calls=[
            search_call(),
            {"name": "calc", "args": {"expr": "1+1"}, "id": "call_2", "type": "tool_call"},
        ],
    )


def conversation():
    return [
        SystemMessage(content="Be brief.", id="s1"),
        HumanMessage(content="weather?", id="h1"),
        ai_with_tool_calls(),
        ToolMessage(content="sunny", tool_call_id="call_1", id="t1"),
        AIMessage(content="It is sunny.", id="a3"),
    ]


def model(name, maybe=None, **kw):
    return pt.ModelV2(name=name, maybe=maybe, **kw)


EXPECTED = {
    "none": None,
    "bytes_top": b"\x00\x01binary",
    "int_small": 7,
    "int_neg": -200,
    "int_u64_max": 2**64 - 1,
    "int_i64_min": -(2**63),
    "float_quarter": 0.25,
    "float_f32_widened": 1.5,
    "bool_true": True,
    "str_unicode": "héllo 🦜",
    "str_300": "x" * 300,
    "list_ints": [1, 2, 3],
    "tuple_mixed": (1, "a", None, 2.5, True),
    "char_as_str": "é",
    "struct_with_bin": {"blob": b"\x00\xff", "tag": "t"},
    "map_int_keys": {-2: "b", 1: "a"},
    "struct_options": {"x": 1, "y": None, "z": "zz"},
    "enum_unit_variant": "Unit",
    "enum_newtype_variant": {"Circle": 1.5},
    "enum_struct_variant": {"Rect": {"w": 2, "h": 3}},
    "big_int_json_fallback": 2**80,
    "uuid": uuid.UUID("12345678-1234-4678-9234-567812345678"),
    "uuid_nil": uuid.UUID(int=0),
    "decimal_1_10": decimal.Decimal("1.10"),
    "decimal_neg0": decimal.Decimal("-0"),
    "decimal_nan": decimal.Decimal("NaN"),
    "decimal_exp": decimal.Decimal("-1.5E-7"),
    "set_ints": {1, 2, 3},
    "set_strs": {"b", "a"},
    "frozenset": frozenset({1, 2}),
    "deque": deque([1, "a", [2]]),
    "ipv4_address": ipaddress.IPv4Address("192.168.1.1"),
    "ipv4_network": ipaddress.IPv4Network("10.0.0.0/8"),
    "ipv4_interface": ipaddress.IPv4Interface("10.0.0.5/24"),
    "ipv6_address": ipaddress.IPv6Address("2001:db8::1"),
    "ipv6_network": ipaddress.IPv6Network("2001:db8::/32"),
    "ipv6_interface": ipaddress.IPv6Interface("2001:db8::1/64"),
    "ipv6_mapped": ipaddress.IPv6Address("::ffff:1.2.3.4"),
    "zoneinfo": zoneinfo.ZoneInfo("Europe/Paris"),
    "enum_str": pt.Color.RED,
    "enum_int": pt.Color.BLUE,
    "enum_tuple": pt.Color.TUPLE,
    "intenum_big": pt.Priority.HUGE,
    "intenum": pt.Priority.HIGH,
    "strenum_unicode": pt.Mode.UNICODE,
    "timedelta": td(days=1, seconds=2, microseconds=3),
    "timedelta_negative": td(seconds=-1),
    "timedelta_big": td(days=999999999, seconds=86399, microseconds=999999),
    "date": dt.date(2024, 2, 29),
    "date_min": dt.date(1, 1, 1),
    "timezone_utc": dt.timezone.utc,
    "timezone_named": dt.timezone(td(seconds=19800), "IST"),
    "timezone_negative_seconds": dt.timezone(td(seconds=-3615)),
    "path_abs": pathlib.PosixPath("/usr/local/lib"),
    "path_rel": pathlib.PosixPath("data/ünï/🦜.json"),
    "path_dot": pathlib.PosixPath("."),
    "regex": re.compile("^a+b*$"),
    "regex_flags": re.compile(r"hello\s+world", re.IGNORECASE | re.MULTILINE),
    "regex_ascii": re.compile(r"\w+", re.ASCII),
    "send": Send("worker", {"item": 1}),
    "send_timeout": Send(
        "worker", [1, 2], timeout=TimeoutPolicy(run_timeout=10.0, idle_timeout=2.5, refresh_on="heartbeat")
    ),
    "send_message_arg": Send("n", HumanMessage(content="m", id="sm1")),
    "time": dt.time(12, 30, 45),
    "time_micro_fold": dt.time(1, 30, 0, 7, fold=1),
    "time_utc": dt.time(8, 0, tzinfo=UTC),
    "time_zoneinfo": dt.time(9, 15, tzinfo=zoneinfo.ZoneInfo("America/New_York")),
    "timeout_policy": TimeoutPolicy(run_timeout=1.5),
    "interrupt": Interrupt(value={"question": "approve?"}, id="i1"),
    "interrupt_default_id": Interrupt(value="need input"),
    "command_resume": Command(resume="yes"),
    "command_goto": Command(goto="node_x"),
    "command_update_goto_send": Command(
        update={"messages": [AIMessage(content="cmd", id="c1")]},
        goto=[Send("worker", {"i": 1}), "other"],
    ),
    "command_parent": Command(graph=Command.PARENT, update={"x": 1}, goto="parent_node"),
    "namedtuple": pt.Point(1, 2),
    "namedtuple_nested": pt.Point([1], pt.Point("a", None)),
    "typed_namedtuple": pt.Span(3, 7),
    "dataclass": pt.Simple(1),
    "dataclass_full": pt.Simple(2, "bee", 2.5),
    "dataclass_frozen": pt.Frozen("k", (1, 2)),
    "dataclass_empty": pt.Empty(),
    "dataclass_nested": pt.Nested(
        name="n", inner=pt.Simple(3), tags=["t1", "t2"], color=pt.Color.GREEN, extra={"when": dt.date(2024, 1, 1)}
    ),
    "datetime_naive": dt.datetime(2024, 1, 2, 3, 4, 5),
    "datetime_micro": dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
    "datetime_utc": dt.datetime(2024, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    "datetime_negative_offset": dt.datetime(2024, 6, 1, 12, tzinfo=dt.timezone(td(hours=-7))),
    "datetime_offset_seconds": dt.datetime(2024, 6, 1, 12, tzinfo=dt.timezone(td(seconds=3615))),
    "datetime_offset_micro": dt.datetime(
        2024, 6, 1, 12, 0, 0, 5, tzinfo=dt.timezone(td(seconds=30, microseconds=250))
    ),
    "datetime_min": dt.datetime.min,
    "datetime_max": dt.datetime.max,
    "pydantic_v2": model("m", count=3, tags=["a"], meta={"k": [1, 2]}),
    "pydantic_v2_nested": pt.OuterV2(id="o1", child=model("c"), children=[model("c2", 7)]),
    "pydantic_v1": pt.ModelV1(name="v1", count=2, tags=["x"]),
    "msg_human": HumanMessage(content="hello", id="h1"),
    "msg_human_no_id": HumanMessage(content="no id"),
    "msg_human_named_kwargs": HumanMessage(content="named", additional_kwargs={"x": 1}, name="alice", id="h2"),
    "msg_human_blocks": HumanMessage(content=[{"type": "text", "text": "describe"}], id="h3"),
    "msg_ai": AIMessage(content="hi there", id="a1"),
    "msg_ai_tool_calls": ai_with_tool_calls(),
    "msg_ai_invalid_tool_call": AIMessage(
        content="oops",
        id="a3",
        invalid_tool_calls=[
            {"type": "invalid_tool_call", "id": "call_3", "name": "search", "args": "{not json", "error": "bad json"}
        ],
    ),
    "msg_ai_usage": AIMessage(
        content="with usage",
        id="a4",
        response_metadata={"model_name": "gpt-x"},
        usage_metadata={
            "input_tokens": 10,
            "output_tokens": 20,
            "total_tokens": 30,
            "input_token_details": {"cache_read": 2},
        },
    ),
    "msg_system": SystemMessage(content="You are helpful.", id="s1"),
    "msg_tool": ToolMessage(content="42", tool_call_id="call_1", id="t1"),
    "msg_tool_error_artifact": ToolMessage(
        content="boom", tool_call_id="call_2", name="calc", id="t2", artifact={"raw": [1]}, status="error"
    ),
    "msg_remove": RemoveMessage(id="h1"),
    "msg_chat": ChatMessage(content="hm", role="critic", id="c1"),
    "msg_function": FunctionMessage(content="12:00", name="get_time", id="f1"),
    "messages_list": conversation(),
    "ndarray_in_struct": {"arr": np.array([1, 2, 3], dtype="<i8")},
    "delta_int": _DeltaSnapshot(1),
    "delta_list": _DeltaSnapshot([1, "two"]),
    "delta_messages": _DeltaSnapshot(conversation()),
    "delta_nested_set": _DeltaSnapshot(_DeltaSnapshot({1, 2})),
    "state": {
        "messages": conversation(),
        "started": dt.datetime(2024, 5, 6, 7, 8, 9, 101112, tzinfo=UTC),
        "seen": {1, 2, 3},
        "budget": decimal.Decimal("0.0042"),
        "run": uuid.UUID("00000000-0000-4000-8000-00000000002a"),
        "scratch": {
            "when": dt.date(2024, 1, 1),
            "elapsed": td(seconds=1, microseconds=500000),
            "tags": frozenset({"x"}),
        },
    },
    "checkpoint": {
        "v": 4,
        "id": "1ef4f797-8335-6428-8001-8a1503f9b875",
        "ts": "2024-07-31T12:00:00.000000+00:00",
        "channel_values": {"messages": conversation(), "__start__": {"messages": "hi"}},
        "channel_versions": {
            "__start__": "00000000000000000000000000000001.0.5",
            "messages": "00000000000000000000000000000002.0.7",
        },
        "versions_seen": {"__input__": {}, "agent": {"messages": "00000000000000000000000000000002.0.7"}},
        "updated_channels": ["messages"],
    },
    "pending_writes": [
        ("task-1", "messages", [HumanMessage(content="w", id="w1")]),
        ("task-1", "__interrupt__", [Interrupt(value="ok?", id="int-1")]),
        ("task-2", "branch:to:worker", Send("worker", {"x": 1})),
    ],
}


def normalize(v):
    """Python reads msgpack arrays as lists: compare tuples as lists."""
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return [normalize(x) for x in v]
    if isinstance(v, list):
        return [normalize(x) for x in v]
    if isinstance(v, dict):
        return {normalize_key(k): normalize(x) for k, x in v.items()}
    if isinstance(v, _DeltaSnapshot):
        return ("delta", normalize(v.value))
    if isinstance(v, np.ndarray):
        return ("ndarray", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, decimal.Decimal) and v.is_nan():
        return ("decimal-nan", str(v))
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    return v


def normalize_key(k):
    return tuple(normalize_key(x) for x in k) if isinstance(k, (list, tuple)) else k


def main() -> int:
    logging.disable(logging.WARNING)  # "unregistered type" notices for pytypes classes
    path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "rust_typed.jsonl"
    passed = failed = 0
    seen = set()
    codes = set()
    notes = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        name, tag, data = row["name"], row["type"], base64.b64decode(row["data"])
        seen.add(name)
        problems = []
        if name not in EXPECTED:
            problems.append("no expected Python value in this script")
        else:
            expected = EXPECTED[name]
            try:
                got = SERDE.loads_typed((tag, data))
            except Exception as e:  # noqa: BLE001
                problems.append(f"Python cannot read it: {e!r}")
                got = None
            if not problems and normalize(got) != normalize(expected):
                # Python itself does not rebuild some values exactly (tuples come back as
                # lists, so an Enum with a tuple value or a tuple field does not
                # round-trip). Then the value must equal Python's own round trip.
                own = SERDE.loads_typed(SERDE.dumps_typed(expected))
                if normalize(got) == normalize(own):
                    notes.append(f"NOTE {name}: equals Python's own round trip of the expected value ({own!r})")
                else:
                    problems.append(f"decoded {got!r}\n      expected {expected!r}")
            if name in HASH_ORDERED:
                pass
            elif tag == "json":
                if json.loads(data) != expected:
                    problems.append("JSON fallback row differs")
            else:
                py_tag, py_data = SERDE.dumps_typed(expected)
                if (py_tag, py_data) != (tag, data):
                    problems.append(f"bytes differ from Python's:\n      rust   {tag} {data!r}\n      python {py_tag} {py_data!r}")
        for code in ext_codes(data) if tag == "msgpack" else []:
            codes.add(code)
        if problems:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            passed += 1
    missing = sorted(set(EXPECTED) - seen)
    if missing:
        failed += len(missing)
        print(f"FAIL vectors missing from {path.name}: {missing}")
    if not set(range(8)) <= codes:
        failed += 1
        print(f"FAIL ext codes covered: {sorted(codes)}, need 0-7")
    for note in notes:
        print(note)
    print(f"ext codes covered: {sorted(codes)}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def ext_codes(data: bytes) -> set[int]:
    import ormsgpack

    found: set[int] = set()

    def hook(code, payload):
        found.add(code)
        try:
            return ormsgpack.unpackb(payload, ext_hook=hook, option=ormsgpack.OPT_NON_STR_KEYS)
        except Exception:  # noqa: BLE001
            return None

    ormsgpack.unpackb(data, ext_hook=hook, option=ormsgpack.OPT_NON_STR_KEYS)
    return found


if __name__ == "__main__":
    sys.exit(main())
