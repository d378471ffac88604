"""Writes rows with an OLD langgraph-checkpoint release (run with that release's venv).

Usage: python gen_python_vintage.py OUT.jsonl
Each line: {"writer", "label", "type", "data" (base64)}. The values are built here;
the bytes come from the installed release's own JsonPlusSerializer (and
EncryptedSerializer where the release has one). Expected values are added later by
read_with_432.py, from what Python langgraph-checkpoint 4.3.2 reads.
"""
import base64
import dataclasses
import decimal
import enum
import ipaddress
import json
import pathlib
import re
import sys
import uuid
from collections import deque
from datetime import date, datetime, time, timedelta, timezone
from importlib.metadata import version

from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

try:
    from langgraph.types import Send  # newer
except Exception:  # noqa: BLE001
    try:
        from langgraph.constants import Send
    except Exception:  # noqa: BLE001
        Send = None


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    y: int


VER = version("langgraph-checkpoint")
WRITER = f"python langgraph-checkpoint=={VER}"

values = {
    "human": HumanMessage(content="hi", id="h1"),
    "ai_tool_calls": AIMessage(
        content="",
        id="a1",
        tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}],
    ),
    "ai_plain": AIMessage(content="hello", name="bot"),
    # List content, as multimodal and tool-using models return it.
    "ai_blocks": AIMessage(
        content=[
            {"type": "text", "text": "Let me search."},
            {"type": "tool_use", "id": "c1", "name": "search", "input": {"q": "x"}},
        ],
        id="a2",
        tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}],
    ),
    "system": SystemMessage(content="be nice"),
    "tool": ToolMessage(content="42", tool_call_id="c1"),
    "chat": ChatMessage(content="c", role="critic"),
    "function": FunctionMessage(content="f", name="fn"),
    "ai_chunk": AIMessageChunk(content="par", id="ch1"),
    "document": Document(page_content="page", metadata={"source": "s"}),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "set_ints": {3, 1, 2},
    "frozenset_strs": frozenset(["b"]),
    "deque": deque([1, "two", 3.0]),
    "datetime_aware": datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=timezone.utc),
    "datetime_naive": datetime(2024, 5, 1, 12, 30),
    "date": date(2024, 2, 29),
    "time": time(23, 59, 58, 7),
    "time_tz": time(1, 2, 3, tzinfo=timezone(timedelta(hours=-5), "EST")),
    "timedelta": timedelta(days=-1, seconds=5, microseconds=7),
    "timezone": timezone(timedelta(hours=5, minutes=30)),
    "timezone_named": timezone(timedelta(hours=1), "CET"),
    "decimal": decimal.Decimal("-12.3400"),
    "decimal_exp": decimal.Decimal("1E+30"),
    "enum": Color.RED,
    "path": pathlib.Path("/tmp/a/b.txt"),
    "regex": re.compile(r"a+b", re.IGNORECASE),
    "ipv4": ipaddress.IPv4Address("10.0.0.1"),
    "ipv6": ipaddress.IPv6Address("fe80::1"),
    "ipv4_network": ipaddress.IPv4Network("10.0.0.0/8"),
    "ipv6_interface": ipaddress.IPv6Interface("2001:db8::1/64"),
    "dataclass": Point(1, 2),
    "big_int": 2**70,
    "big_neg_int": -(2**65),
    "state": {
        "messages": [HumanMessage(content="q", id="h"), AIMessage(content="a", id="a")],
        "count": 3,
        "when": datetime(2024, 1, 1, tzinfo=timezone.utc),
        "nested": {"list": [1, [2, [3]]], "none": None, "f": 1.5},
    },
}
if Send is not None:
    values["send"] = Send("node", {"arg": 1})
try:
    from langchain_core.messages import RemoveMessage

    values["remove"] = RemoveMessage(id="r1")
except Exception:  # noqa: BLE001
    pass
try:
    from zoneinfo import ZoneInfo

    values["zoneinfo"] = ZoneInfo("Europe/Paris")
except Exception:  # noqa: BLE001
    pass

serde = JsonPlusSerializer()
rows = []


def add(label, tag, data):
    rows.append(
        {
            "writer": WRITER,
            "label": label,
            "type": tag,
            "data": base64.b64encode(bytes(data)).decode(),
        }
    )


for label, value in values.items():
    try:
        tag, data = serde.dumps_typed(value)
    except Exception as e:  # noqa: BLE001
        print(f"{WRITER}: {label}: dumps_typed refused: {type(e).__name__}: {e}", file=sys.stderr)
        continue
    add(label, tag, data)
    if tag != "json" and hasattr(serde, "dumps"):
        # The release's own json form, which it writes when msgpack refuses a value
        # (strings with lone surrogates): same envelopes, under the "json" tag.
        try:
            add(label + "/json", "json", serde.dumps(value))
        except Exception as e:  # noqa: BLE001
            print(f"{WRITER}: {label}: dumps refused: {e}", file=sys.stderr)

# A string with a lone surrogate: releases 1.0.10+ fall back to a json row for it.
try:
    tag, data = serde.dumps_typed({"s": "a\ud800b", "n": 1})
    add("lone_surrogate", tag, data)
except Exception as e:  # noqa: BLE001
    print(f"{WRITER}: lone_surrogate refused: {e}", file=sys.stderr)
# Python's json.dumps with its default ensure_ascii=True keeps the surrogate as an escape.
add("lone_surrogate_ascii_json", "json", json.dumps({"s": "a\ud800b", "big": 2**70}).encode())

try:
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    enc = EncryptedSerializer.from_pycryptodome_aes(key=b"0123456789abcdef0123456789abcdef")
    for label in ["human", "datetime_aware", "state", "uuid"]:
        tag, data = enc.dumps_typed(values[label])
        add(label + "/aes", tag, data)
except ImportError:
    pass

with open(sys.argv[1], "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
print(f"{WRITER}: {len(rows)} rows", file=sys.stderr)
