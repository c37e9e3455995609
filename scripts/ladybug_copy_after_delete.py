"""A crash of LadybugDB 0.22, reduced for its maintainers (run: python scripts/ladybug_copy_after_delete.py).

After nodes were deleted (DETACH DELETE), a transaction that bulk-loads new nodes (COPY FROM)
and then relationships naming a node that no longer exists fails, as it should ("Unable to
find primary key value"), and rolls back; the next statement on that connection, or closing
the database, ends the process with a segmentation fault. Without the earlier delete the
same failure is harmless.

graphtasks met it when a sweep wrote finished runs after `graphtasks experiment delete` had
removed their experiment. It avoids the pattern: records are never written for an experiment
that is no longer recorded (`graphtasks.experiments.records.require_experiment`), and the
embedded store checks that every relationship's ends exist before a bulk load.
"""

from __future__ import annotations

import csv
import shutil
import sys
import tempfile
from pathlib import Path

import ladybug


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="ladybug-crash-"))
    path = str(folder / "db")

    def connect() -> tuple[ladybug.Database, ladybug.Connection]:
        database = ladybug.Database(path)
        return database, ladybug.Connection(database)

    database, connection = connect()
    connection.execute("CREATE NODE TABLE A(uid STRING, PRIMARY KEY(uid))")
    connection.execute("CREATE NODE TABLE B(uid STRING, PRIMARY KEY(uid))")
    connection.execute("CREATE REL TABLE R(FROM A TO B)")
    connection.execute("CREATE (:A {uid: 'a'})")
    for i in range(3):
        connection.execute(f"CREATE (:B {{uid: 'b{i}'}})")
        connection.execute(f"MATCH (a:A), (b:B) WHERE a.uid = 'a' AND b.uid = 'b{i}' CREATE (a)-[:R]->(b)")
    connection.close()
    database.close()

    database, connection = connect()
    connection.execute("MATCH (n:B) DETACH DELETE n")
    connection.execute("MATCH (n:A) DETACH DELETE n")
    connection.close()
    database.close()

    (folder / "b.csv").write_text("b9\n")
    with open(folder / "r.csv", "w", newline="") as handle:
        csv.writer(handle).writerow(["a", "b9"])  # 'a' was deleted
    database, connection = connect()
    connection.execute("BEGIN TRANSACTION")
    try:
        connection.execute(f"COPY B FROM '{folder / 'b.csv'}'")
        connection.execute(f"COPY R FROM '{folder / 'r.csv'}'")
    except RuntimeError as exc:
        print(f"COPY failed, as it should: {exc}", flush=True)
    print("the next statement crashes the process:", flush=True)
    print(connection.execute("MATCH (b:B) RETURN count(b)").get_all(), flush=True)
    connection.close()
    database.close()
    shutil.rmtree(folder, ignore_errors=True)
    print("no crash: this version of LadybugDB is fixed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
