"""Per-channel sizes of the channel values in an SQLite store's checkpoint rows, computed
by today's Python serializer: each row decoded with `JsonPlusSerializer.loads_typed`
(wrapped in `EncryptedSerializer.from_pycryptodome_aes` when a key is given), and each
channel value re-encoded on its own with `dumps_typed` (what Python's Postgres saver
would store as that channel's blob, in clear). The expected values of `lgcodec store
stats` `per_channel_values` on SQLite.

    python vectors/store_maint/channel_sizes.py STORE.sqlite [AES_KEY]

Prints `{"channel": [rows, bytes], …}` as one JSON line.
"""

import json
import sqlite3
import sys
import warnings

warnings.filterwarnings("ignore")

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    plain = JsonPlusSerializer()
    serde = plain
    if len(sys.argv) == 3:
        from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

        serde = EncryptedSerializer.from_pycryptodome_aes(key=sys.argv[2].encode())
    conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    out = {}
    for ty, blob in conn.execute("SELECT type, checkpoint FROM checkpoints"):
        checkpoint = serde.loads_typed((ty, blob))
        for channel, value in checkpoint["channel_values"].items():
            _, data = plain.dumps_typed(value)
            size = out.setdefault(channel, [0, 0])
            size[0] += 1
            size[1] += len(data)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
