"""Deeply nested rows as Python langgraph-checkpoint 4.3.2 writes them.

Usage: python gen_deep.py > vectors/wild/deep.jsonl   (the 4.3.2 venv)

Python packs each envelope's payload with its own packb, so its 255-level limit
applies per envelope: it writes (and reads back) ~480 nested dataclasses or Sends in
one row. Each row is checked to read back in Python to the same bytes.
"""
import base64
import dataclasses
import json
import sys
import warnings

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Send

warnings.simplefilter("ignore")


@dataclasses.dataclass
class N:
    child: object


def chain(make, depth):
    v = 1
    for _ in range(depth):
        v = make(v)
    return v


serde = JsonPlusSerializer()
for label, make, depth in [
    ("dataclass", N, 480),
    ("send", lambda v: Send("n", v), 480),
    ("list", lambda v: [v], 255),
    ("send_of_lists", lambda v: Send("n", [[[[[[[[[[v]]]]]]]]]]), 300),
]:
    tag, data = serde.dumps_typed(chain(make, depth))
    assert serde.dumps_typed(serde.loads_typed((tag, data))) == (tag, data), label
    print(json.dumps({"label": label, "depth": depth, "type": tag, "data": base64.b64encode(data).decode()}))
print("ok", file=sys.stderr)
