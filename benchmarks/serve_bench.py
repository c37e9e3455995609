"""The study server under load: acknowledged trials per second with 50 simulated participants,
against one participant alone in the same run, and nothing lost to a kill -9.

A real `graphtasks serve` process on 127.0.0.1 (started as a user starts it, with a fresh
embedded store) serves a two-step study. Simulated participants talk to it over HTTP/1.1
(one kept-alive connection each, asyncio in this process), each posting its next choice as
soon as the answer to the last one arrives, as the pages do when nobody waits.

1. The baseline: one participant plays its session alone.
2. N participants (default 50) play theirs at once: acknowledged trials/s and the ratio to 1.
3. With `--kill`: N more participants, the server is killed with -9 half way and started
   again on the same store; the participants resend what was not answered, as the pages do.
   Every trial answered must be in the store, each trial stored once, in order.

A trial counts as acknowledged when its 200 answer has arrived: the server answers only
after the trial's transaction has committed. Bounded: at most `--trials` trials per
participant, and the whole run stops after `--limit` seconds.

    python benchmarks/serve_bench.py                # about a minute on 2 cores
    python benchmarks/serve_bench.py --quick        # short, to check the script
    python benchmarks/serve_bench.py --kill         # and kill -9 the server under load
    python benchmarks/serve_bench.py --profile out  # the server's cProfile, written to out.*
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphstore import open_store  # noqa: E402
from graphtasks.experiments.ids import experiment_uid  # noqa: E402

RESEARCHER = "researcher-token-for-the-benchmark-0123"
NAME = "two-step load"
STUDY = """
[experiment]
name = "two-step load"
tasks = ["rewardgym/two-step"]
seeds = [11, 12, 13]

[[agents]]
name = "hybrid"

[[phases]]
name = "main"
episodes = {episodes}

[study]
title = "A two-step task"
consent = "You are invited to take part in a study of decisions."
keys = ["f", "j"]
timeout_ms = 0
"""
AGENT_RUNS = 3  # the spec's agent runs (1 agent x 3 seeds) come before the sessions


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A `graphtasks serve` process on 127.0.0.1 (optionally profiled with cProfile)."""

    def __init__(self, study: Path, store: Path, profile: str | None = None) -> None:
        self.study, self.store, self.profile = study, store, profile
        self.port = free_port()
        self.process: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 120.0) -> Server:
        env = {**os.environ, "GRAPHTASKS_RESEARCHER_TOKEN": RESEARCHER}
        head = [sys.executable, "-m", "cProfile", "-o", self.profile] if self.profile else [sys.executable]
        self.process = subprocess.Popen(
            [*head, "-m", "graphtasks", "--store", str(self.store), "serve", str(self.study), "--port", str(self.port)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.process.poll() is not None:
                out = self.process.stdout.read() if self.process.stdout else ""
                raise SystemExit(f"serve_bench: the server exited: {out}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        raise SystemExit("serve_bench: the server did not answer")

    def cpu(self) -> float:
        """The server process's CPU seconds so far (user and system)."""
        assert self.process is not None
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, kill: bool = False) -> str:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
        out, _ = self.process.communicate(timeout=60)
        return out or ""


class Connection:
    """One participant's kept-alive HTTP/1.1 connection (JSON in, JSON out)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def call(self, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else b""
        head = f"{'POST' if body is not None else 'GET'} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        try:
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            assert self.reader is not None
            self.writer.write(head.encode() + b"\r\n" + data)
            status_line = await self.reader.readline()
            if not status_line:
                raise ConnectionResetError("closed")
            status = int(status_line.split()[1])
            length = 0
            while True:
                line = await self.reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            payload = await self.reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            self.close()
            raise ConnectionResetError("the connection was cut") from None
        return status, json.loads(payload) if payload else None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def begin(port: int, count: int, first: int) -> list[str]:
    """`count` sessions started and consented (participant ids `first`...)."""
    tokens = []
    conn = Connection(port)
    for i in range(first, first + count):
        status, started = await conn.call("/api/start", {"params": {"PROLIFIC_PID": f"bench-{i}"}})
        assert status == 200, started
        assert (await conn.call(f"/api/s/{started['token']}/consent", {"agree": True}))[0] == 200
        tokens.append(started["token"])
    conn.close()
    return tokens


async def participant(port: int, token: str, acknowledged: list[int], deadline: float) -> list[int]:
    """Play a session to its end as a page does (a post that fails is sent again); the indices of
    the trials answered, in the order answered."""
    conn = Connection(port)
    position = None
    answered: list[int] = []
    while time.monotonic() < deadline:
        try:
            if position is None:
                status, view = await conn.call(f"/api/s/{token}")
                if status != 200:
                    raise ConnectionResetError(status)
                position = view["position"]
            if position["done"]:
                break
            body = {"index": position["trial"], "action": position["available"][position["trial"] % 2], "rt": 300.0}
            status, answer = await conn.call(f"/api/s/{token}/trial", body)
        except ConnectionResetError:  # the server is down or restarting: try again
            await asyncio.sleep(0.05)
            continue
        if status >= 500:
            await asyncio.sleep(0.05)
            continue
        assert status == 200, answer
        acknowledged.append(1)
        answered.append(answer["index"])
        position = answer["position"]
    conn.close()
    return answered


async def load(port: int, tokens: list[str], limit: float) -> tuple[float, int, list[list[int]]]:
    acknowledged: list[int] = []
    start = time.monotonic()
    answered = await asyncio.gather(*(participant(port, t, acknowledged, start + limit) for t in tokens))
    return time.monotonic() - start, len(acknowledged), list(answered)


def stored(store: Path) -> list[tuple[Any, ...]]:
    with open_store(store, "r") as s:
        return [tuple(r) for r in s.cypher(
            "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.owner = $uid "
            "RETURN r.index, e.index, t.step, t.uid ORDER BY r.index, e.index, t.step",
            {"uid": experiment_uid(NAME)},
        ).rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=50)
    parser.add_argument("--trials", type=int, default=200, help="trials per participant (even; default 200)")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds a load may last (default 300)")
    parser.add_argument("--kill", action="store_true", help="also kill -9 the server under load and check the store")
    parser.add_argument("--quick", action="store_true", help="10 participants of 20 trials")
    parser.add_argument("--profile", metavar="PREFIX", help="run the server under cProfile; print its top functions")
    args = parser.parse_args(argv)
    if args.quick:
        args.participants, args.trials = 10, 20
    n, trials = args.participants, max(2, args.trials - args.trials % 2)
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
        study = Path(tmp) / "study.toml"
        study.write_text(STUDY.format(episodes=trials // 2), encoding="utf-8")
        store = Path(tmp) / "store.lbug"
        server = Server(study, store, f"{args.profile}.prof" if args.profile else None).start()
        try:
            tokens = asyncio.run(begin(server.port, 1 + n, 0))
            cpu0 = server.cpu()
            took1, acked1, _ = asyncio.run(load(server.port, tokens[:1], args.limit))
            cpu1, mine = server.cpu(), time.process_time()
            took, acked, answered = asyncio.run(load(server.port, tokens[1:], args.limit))
            cpu2, mine = server.cpu(), time.process_time() - mine
        finally:
            said = server.stop()
        one, many = acked1 / took1, acked / took
        print(f"1 participant:   {acked1:6d} trials acknowledged in {took1:6.2f} s: {one:7.0f} trials/s "
              f"(the server's CPU: {(cpu1 - cpu0) / acked1 * 1e6:.0f} us a trial)")
        print(f"{n} participants: {acked:6d} trials acknowledged in {took:6.2f} s: {many:7.0f} trials/s "
              f"({many / one:.1f}x one participant)")
        print(f"CPU a trial with {n} participants: the server {(cpu2 - cpu1) / acked * 1e6:.0f} us, the participants "
              f"(this process) {mine / acked * 1e6:.0f} us")
        print(f"the server: {said.strip().splitlines()[-1]}")
        rows = stored(store)
        complete = acked1 + acked == (1 + n) * trials
        print(f"stored: {len(rows)} trials ({'every' if len(rows) == acked1 + acked else 'NOT every'} trial "
              f"acknowledged, {'all sessions complete' if complete else 'sessions cut by --limit'})")
        if args.profile:
            import pstats

            print(f"the server's profile ({args.profile}.prof), by cumulative time:")
            pstats.Stats(f"{args.profile}.prof").sort_stats("cumulative").print_stats(30)
        ok = len(rows) == acked1 + acked and len({r[-1] for r in rows}) == len(rows)
        if args.kill:
            server = Server(study, store).start()
            try:
                tokens = asyncio.run(begin(server.port, n, 1 + n))

                async def killed() -> tuple[float, int, int, list[list[int]]]:
                    acknowledged: list[int] = []
                    start = time.monotonic()
                    tasks = [asyncio.create_task(participant(server.port, t, acknowledged, start + args.limit))
                             for t in tokens]
                    while len(acknowledged) < n * trials // 2 and time.monotonic() < start + args.limit:
                        await asyncio.sleep(0.01)
                    at_kill = len(acknowledged)
                    await asyncio.to_thread(server.stop, True)
                    await asyncio.to_thread(server.start)
                    answered = await asyncio.gather(*tasks)
                    return time.monotonic() - start, len(acknowledged), at_kill, list(answered)

                took_k, acked_k, at_kill, answered = asyncio.run(killed())
            finally:
                said = server.stop()
            rows = stored(store)
            runs = {r[0] for r in rows}
            new = [r for r in rows if r[0] >= AGENT_RUNS + 1 + n]
            # a trial answered twice (its post resent across the kill) is answered as a duplicate
            in_order = all(a == sorted(a) and set(a) == set(range(len(set(a)))) for a in answered)
            every = sum(len(set(a)) for a in answered)
            print(f"kill -9 after {at_kill} answers: {acked_k} acknowledged in {took_k:.2f} s "
                  f"({acked_k / took_k:.0f} trials/s, the restart included); {said.strip().splitlines()[-1]!r}")
            kept = len(new) >= every and len({r[-1] for r in rows}) == len(rows) and in_order
            print(f"stored after the restart: {len(new)} trials of {n} sessions, {every} acknowledged: "
                  f"{'nothing lost' if kept else 'LOST OR REPEATED TRIALS'} ({len(runs)} runs)")
            ok = ok and kept
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
