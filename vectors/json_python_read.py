"""What Python reads from each `json` row of unit.jsonl, written back as JsonPlus.

For every `json_*` row: `JsonPlusSerializer().loads_typed(("json", data))`, then
`dumps_typed` of the value Python got (LangChain objects revived from lc envelopes
become ext-5 model rows, legacy lc:2 reprs become their types). Rows Python refuses
record the exception's class name. Deterministic: `--check` regenerates and compares.

    .venv/bin/python vectors/json_python_read.py           # rewrite the file
    .venv/bin/python vectors/json_python_read.py --check   # CI: the file is current
"""

import base64
import json
import pathlib
import sys
import warnings

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

HERE = pathlib.Path(__file__).parent
OUT = HERE / "json_python_read.jsonl"


def rows() -> str:
    s = JsonPlusSerializer()
    lines = []
    for line in (HERE / "unit.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["type"] != "json":
            continue
        data = base64.b64decode(r["data"])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = s.loads_typed(("json", data))
            t, d = s.dumps_typed(v)
            o = {"name": r["name"], "type": t, "data": base64.b64encode(d).decode()}
        except Exception as e:  # noqa: BLE001 - the class name is the answer
            o = {"name": r["name"], "error": type(e).__name__}
        lines.append(json.dumps(o))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = rows()
    if "--check" in sys.argv:
        if OUT.read_text() != text:
            sys.exit(f"{OUT.name} is stale: rerun vectors/json_python_read.py")
        print(f"{OUT.name}: current")
    else:
        OUT.write_text(text)
