"""Rows for the typed layer's gaps, written by Python langgraph-checkpoint 4.3.2.

Usage: python gen_typed_gaps.py > vectors/wild/typed_gaps.jsonl   (the 4.3.2 venv)
"""
import base64
import ipaddress
import json
import warnings
from datetime import datetime, timezone

from langchain_core.messages import (
    AIMessageChunk,
    ChatMessageChunk,
    FunctionMessageChunk,
    HumanMessageChunk,
    SystemMessageChunk,
    ToolMessageChunk,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.store.base import Item
from pydantic import SecretBytes, SecretStr

warnings.simplefilter("ignore")
serde = JsonPlusSerializer()
values = {
    "ai_chunk": AIMessageChunk(
        content="par",
        id="c1",
        tool_call_chunks=[{"name": "search", "args": '{"q": ', "id": "t1", "index": 0}],
        chunk_position="last",
    ),
    "human_chunk": HumanMessageChunk(content="hi", id="h1"),
    "system_chunk": SystemMessageChunk(content="sys"),
    "tool_chunk": ToolMessageChunk(content="42", tool_call_id="t1"),
    "chat_chunk": ChatMessageChunk(content="c", role="critic"),
    "function_chunk": FunctionMessageChunk(content="f", name="fn"),
    "secret_str": SecretStr("hunter2"),
    "secret_bytes": SecretBytes(b"\x00\x01key"),
    "ipv6_scoped": ipaddress.IPv6Address("fe80::1%eth0"),
    "ipv6_scoped_interface": ipaddress.IPv6Interface("fe80::1%eth0/64"),
    "bytearray": bytearray(b"\x00\x01\x02"),
    "store_item": Item(
        value={"a": 1},
        key="k",
        namespace=("users", "u1"),
        created_at=datetime(2024, 1, 1, tzinfo=timezone.utc),
        updated_at=datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
    ),
}
for label, value in values.items():
    tag, data = serde.dumps_typed(value)
    back = serde.loads_typed((tag, data))
    print(
        json.dumps(
            {
                "label": label,
                "type": tag,
                "data": base64.b64encode(bytes(data)).decode(),
                "python_reads_back_equal": bool(back == value),
                "python_repr": repr(back),
            }
        )
    )
