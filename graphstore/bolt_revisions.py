"""Revision claims: what makes version-checked writes safe on Bolt servers without record locks.

Neo4j locks a node on write, so a writer that changes the Task node first waits for a racing
writer and then reads its hash. Optimistic servers (ArcadeDB, default read-committed) do not:
a statement reads the Task node, a racing commit lands, and the write goes through on a
record read before that commit, so two writes built on the same version can both commit
(measured: about 1 in 200 racing increments under CPU load) and the stored hash no longer
matches the stored content.

A unique index does hold on those servers. So every write of a task that exists also creates
a small ``TaskRevision`` node whose unique ``key`` names the version the write was built on
(the random ``revision_token`` read from the Task node). Two writes on one version claim the
same key and the server refuses one at commit; a write that read a stale Task node claims a
key its predecessor already holds and is refused too. The Task node then gets a fresh token.
The newest ``REVISIONS_KEPT`` claims per task are kept (a read is stale by one commit in
practice, never by sixteen); the rest are pruned by the write that makes the next one.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import neo4j

REVISION_LABEL = "TaskRevision"
REVISIONS_KEPT = 16

SCHEMA_STATEMENTS = (
    f"CREATE CONSTRAINT graphtasks_task_revision_key IF NOT EXISTS FOR (n:{REVISION_LABEL}) REQUIRE n.key IS UNIQUE",
    f"CREATE INDEX graphtasks_task_revision_task IF NOT EXISTS FOR (n:{REVISION_LABEL}) ON (n.task)",
)


@dataclass(frozen=True)
class Claim:
    """What a write read from the Task node, and the revision it makes.

    `key` is None when the task did not exist: creating the Task node (unique uid) is then
    the claim.
    """

    task_id: str
    stored_hash: str | None
    key: str | None
    revision: int
    token: str

    @property
    def existed(self) -> bool:
        return self.key is not None


def claim(tx: neo4j.ManagedTransaction, task_id: str, new_hash: str | None) -> Claim:
    """Read the Task node's hash and revision; a put (`new_hash` given) also sets its new hash
    in the same statement, which on Neo4j takes the node's write lock before reading."""
    if new_hash is None:
        query = "MATCH (t:Task) WHERE t.uid = $id RETURN t.content_hash, t.revision_token, t.revision"
    else:
        query = (
            "MATCH (t:Task) WHERE t.uid = $id WITH t, t.content_hash AS h, t.revision_token AS k, t.revision AS r "
            "SET t.content_hash = $new RETURN h, k, r"
        )
    rows = tx.run(query, id=task_id, new=new_hash).values()
    if not rows:
        return Claim(task_id, None, None, 1, secrets.token_hex(16))
    stored, token, revision = rows[0]
    # a Task node written before revisions existed: its hash names its version
    key = f"{task_id}@{token or 'hash:' + str(stored)}"
    return Claim(task_id, stored, key, int(revision or 0) + 1, secrets.token_hex(16))


def record(tx: neo4j.ManagedTransaction, made: Claim, deleted: bool = False) -> None:
    """Create the claim node (refused at commit if another write made it first), prune old
    claims and give the Task node its new token. A delete keeps only its own claim, so a
    write that read the task before it was deleted is refused; a task created anew starts
    with no claims."""
    if made.existed:
        tx.run(
            f"CREATE (:{REVISION_LABEL} {{key: $key, task: $id, revision: $revision}})",
            key=made.key,
            id=made.task_id,
            revision=made.revision,
        ).consume()
        oldest_kept = made.revision if deleted else made.revision - REVISIONS_KEPT + 1
        tx.run(
            f"MATCH (m:{REVISION_LABEL}) WHERE m.task = $id AND m.revision < $oldest DELETE m",
            id=made.task_id,
            oldest=oldest_kept,
        ).consume()
    else:
        tx.run(f"MATCH (m:{REVISION_LABEL}) WHERE m.task = $id DELETE m", id=made.task_id).consume()
    if not deleted:
        tx.run(
            "MATCH (t:Task) WHERE t.uid = $id SET t.revision_token = $token, t.revision = $revision",
            id=made.task_id,
            token=made.token,
            revision=made.revision,
        ).consume()


def taken(session: neo4j.Session, key: str) -> bool:
    """True if a committed write holds the claim `key`: a write that failed claiming it lost a race."""
    rows: list[Any] = session.run(f"MATCH (m:{REVISION_LABEL}) WHERE m.key = $key RETURN count(m)", key=key).values()
    return bool(rows and rows[0][0])
