"""`lgcodec store import` killed with SIGKILL mid-way, then run again: the store ends
exactly as an uninterrupted import leaves it (nothing lost, nothing twice).

    python vectors/store_maint/import_kill_resume.py LGCODEC_BINARY [ROUNDS] [POSTGRES_URL]

Python's SqliteSaver writes 10,000 checkpoints over 1,000 threads (two pending writes
each); `lgcodec store export` makes a backup of it. The backup is imported into a fresh
SQLite file without interruption: the reference. In each round a fresh file gets the
import, killed after a random delay (import goes table by table, so how far it got is
counted in rows of every table), then the same import again to completion; the file
must then hold exactly the reference's rows, byte for byte. With POSTGRES_URL (a server
where databases may be created and dropped), the same rounds run against a Postgres
backup (the store copied there with `lgcodec store copy`, exported), each round into a
fresh database, every table compared. At least one kill per backend must land mid-way
(some rows imported, not all), or the check fails and asks for a larger store.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from kill_rounds import Postgres, fail, kill_rounds, run, sqlite_rows  # noqa: E402
from make_store import make_store  # noqa: E402

TOTAL, THREADS = 10000, 1000


def rounds_on(name: str, binary: str, backup: str, rounds: int, rng: random.Random,
              fresh_target, rows_of) -> None:
    def importing(target: str) -> list[str]:
        return [binary, "store", "import", backup, target]

    reference = fresh_target("reference")
    took = run(importing(reference))
    want = rows_of(reference)
    if len(want[0]) != TOTAL:
        fail(f"{name}: the reference holds {len(want[0])} checkpoints, want {TOTAL}")
    # Import goes table by table: how far it got is the rows of every table.
    all_rows = sum(len(t) for t in want)
    kill_rounds(name, "import", rounds, rng, command=importing, make_victim=fresh_target,
                state_of=rows_of, want=want, took=took,
                progress_of=lambda target: sum(len(t) for t in rows_of(target)),
                mid_way=lambda rows: 0 < rows < all_rows)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    rng = random.Random(int(os.environ.get("IMPORT_KILL_SEED", "11")))
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "source.sqlite")
        make_store(source, TOTAL, THREADS)
        backup = os.path.join(tmp, "backup.jsonl")
        run([binary, "store", "export", source, backup])
        rounds_on("sqlite", binary, backup, rounds, rng,
                  lambda n: os.path.join(tmp, f"{n}.sqlite"), sqlite_rows)
        if len(sys.argv) > 3:
            pg = Postgres(sys.argv[3])
            pg_source = pg.fresh("ik_source")
            run([binary, "store", "copy", source, pg_source])
            pg_backup = os.path.join(tmp, "pg-backup.jsonl")
            run([binary, "store", "export", pg_source, pg_backup])
            rounds_on("postgres", binary, pg_backup, rounds, rng,
                      lambda n: pg.fresh(f"ik_{n}"), pg.rows)


if __name__ == "__main__":
    main()
