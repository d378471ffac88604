"""Adds to each row what Python langgraph-checkpoint 4.3.2 reads from it.

Usage: python read_with_432.py IN.jsonl... > OUT.jsonl   (run with the 4.3.2 venv)

For every row: "py_ok" (4.3.2's loads_typed succeeded), "py_error" (its exception type
otherwise), and "py_redump_type"/"py_redump_data": what 4.3.2's dumps_typed writes for
the value it read (its msgpack form is the expected Value for our reader), or
"py_redump_error" when it cannot write it (integers beyond 64 bits), in which case
"py_json" holds json.dumps(value) (ensure_ascii, so lone surrogates stay escapes).
"""
import base64
import json
import logging
import sys
import warnings

from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)
KEY = b"0123456789abcdef0123456789abcdef"
plain = JsonPlusSerializer()
enc = EncryptedSerializer.from_pycryptodome_aes(key=KEY)
for name in sys.argv[1:]:
    for line in open(name):
        row = json.loads(line)
        data = base64.b64decode(row["data"])
        serde = enc if row["type"].endswith("+aes") else plain
        try:
            value = serde.loads_typed((row["type"], data))
            row["py_ok"] = True
        except Exception as e:  # noqa: BLE001
            row["py_ok"] = False
            row["py_error"] = type(e).__name__
            print(json.dumps(row))
            continue
        try:
            tag, out = plain.dumps_typed(value)
            row["py_redump_type"] = tag
            row["py_redump_data"] = base64.b64encode(out).decode()
        except Exception as e:  # noqa: BLE001
            row["py_redump_error"] = f"{type(e).__name__}: {e}"
            row["py_json"] = json.dumps(value, default=repr)
        print(json.dumps(row))
