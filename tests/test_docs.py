"""Every shell and Python block of README.md and docs/**/*.md runs as written, and shows what it prints.

Rules (also on docs/development.md, "Executable documentation"):
- ```bash / ```sh / ```shell blocks run with `bash -euo pipefail`, ```python blocks with this
  interpreter, each in a fresh process. Every other language (```text, ```toml, ```cypher,
  ```sparql, ...) is not run: output, file formats and placeholders go there.
- The blocks of one page run in order in one temporary working directory with one store
  (`GRAPHTASKS_STORE` points into that directory, and `graphtasks` is on PATH): a later
  block sees the files and tasks an earlier block made. Each block is its own test,
  named `page:line`; running one block alone first runs the blocks before it on its page.
- `<!-- output -->` directly before a ```text block that follows a run block: every
  non-blank shown line, trailing blanks stripped, must be a line of what the block printed
  on stdout, in the same order (other printed lines may come between; a shown `...` line
  only marks an elision).
- `<!-- slow -->` before a run block marks its test `slow` (`pytest -m "not slow"`), and
  every later block of its page too (they would run it first). The quick run executes only
  the README's blocks; the full run (CI) executes every page.
- `<!-- not run: REASON -->` before a run block keeps it out of the run (the quick start,
  which installs the package and runs this very suite); the reason is required.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
RUN = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python"}
NOT_RUN = {"text", "toml", "cypher", "sparql", "json", "yaml", "ini", "console"}
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
DIRECTIVE = re.compile(r"^\s*<!--\s*(?P<body>.*?)\s*-->\s*$")
TIMEOUT = 600


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    directives: list[str] = field(default_factory=list)
    shown: str | None = None  # the ```text block marked `<!-- output -->` after it

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO).as_posix()}:{self.line}"

    @property
    def not_run_reason(self) -> str | None:
        for directive in self.directives:
            if directive.startswith("not run"):
                return directive.partition(":")[2].strip()
        return None


def parse(page: Path) -> list[Block]:
    """All fenced blocks of a page with the directive comments on the lines just before them."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    pending: list[str] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            directive = DIRECTIVE.match(lines[i])
            if directive:
                pending.append(directive["body"])
            elif lines[i].strip():
                pending = []
            i += 1
            continue
        indent, start = len(fence["indent"]), i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:] if not lines[i][:indent].strip() else lines[i].lstrip())
            i += 1
        assert i < len(lines), f"{page.name}:{start + 1}: code block never closed"
        blocks.append(Block(page, start + 1, fence["lang"], "\n".join(body) + "\n", pending))
        pending = []
        i += 1
    return blocks


def run_blocks(page: Path) -> list[Block]:
    """The blocks of a page that run, each with the output it shows (if any)."""
    blocks = parse(page)
    result: list[Block] = []
    for block in blocks:
        if block.lang in RUN and block.not_run_reason is None:
            result.append(block)
        elif block.lang == "text" and "output" in block.directives:
            assert result, f"{block.page.name}:{block.line}: an output block with no run block before it"
            result[-1].shown = block.code
    return result


ALL = {page: run_blocks(page) for page in PAGES}


def slow_from(blocks: list[Block]) -> set[int]:
    """Lines of the blocks that only the full run executes: every block of the pages in docs/
    (the quick run keeps the README's), and on the README the blocks marked slow and every
    block after one (running a later block first runs the earlier ones)."""
    if blocks and blocks[0].page != REPO / "README.md":
        return {b.line for b in blocks}
    first = next((b.line for b in blocks if "slow" in b.directives), None)
    return {b.line for b in blocks if first is not None and b.line >= first}


PARAMS = [
    pytest.param(block, id=block.name, marks=[pytest.mark.slow] if block.line in slow else [])
    for blocks in ALL.values()
    for slow in [slow_from(blocks)]
    for block in blocks
]


@dataclass
class PageRun:
    """One page's working directory and store, and which of its blocks have run."""

    folder: Path
    done: dict[int, bool] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["GRAPHTASKS_STORE"] = str(self.folder / "store.lbug")
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        env["MPLBACKEND"] = "Agg"
        return env

    def run(self, block: Block) -> subprocess.CompletedProcess[str]:
        if block.lang == "python":
            script = self.folder / f"block_{block.line}.py"
            script.write_text(block.code, encoding="utf-8")
            command = [sys.executable, script.name]
        else:
            command = ["bash", "-euo", "pipefail", "-c", block.code]
        return subprocess.run(
            command, cwd=self.folder, env=self.env(), capture_output=True, text=True, timeout=TIMEOUT
        )


@pytest.fixture(scope="session")
def page_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, PageRun]:
    return {page: PageRun(tmp_path_factory.mktemp(page.stem)) for page in PAGES}


def check_shown(shown: str, printed: str) -> None:
    """Each shown line, in order, is a whole printed line (trailing blanks ignored)."""
    out = [line.rstrip() for line in printed.splitlines()]
    position = 0
    for line in (raw.rstrip() for raw in shown.splitlines()):
        if not line or line == "...":
            continue
        try:
            position = out.index(line, position) + 1
        except ValueError:
            raise AssertionError(f"shown line {line!r} not printed (in order); printed:\n{printed}") from None


def execute(block: Block, page_run: PageRun) -> None:
    outcome = page_run.run(block)
    page_run.done[block.line] = outcome.returncode == 0
    assert outcome.returncode == 0, (
        f"{block.name} exited {outcome.returncode}\n--- stdout\n{outcome.stdout[-3000:]}\n"
        f"--- stderr\n{outcome.stderr[-3000:]}"
    )
    if block.shown is not None:
        check_shown(block.shown, outcome.stdout)


@pytest.mark.parametrize("block", PARAMS)
def test_block_runs_as_written(block: Block, page_runs: dict[Path, PageRun]) -> None:
    page_run = page_runs[block.page]
    for earlier in ALL[block.page]:
        if earlier.line >= block.line:
            break
        if earlier.line not in page_run.done:
            execute(earlier, page_run)
        assert page_run.done[earlier.line], f"an earlier block of the page failed: {earlier.name}"
    execute(block, page_run)


def test_every_block_has_a_known_language() -> None:
    """A bare ``` block would silently escape the run: name the language, `text` if it must not run."""
    for page in PAGES:
        for block in parse(page):
            assert block.lang in RUN or block.lang in NOT_RUN, f"{block.name}: language {block.lang!r}"
            if block.lang in RUN and block.not_run_reason is not None:
                assert block.not_run_reason, f"{block.name}: `not run` needs a reason"


def test_output_markers_precede_text_blocks() -> None:
    for page in PAGES:
        for block in parse(page):
            if "output" in block.directives:
                assert block.lang == "text", f"{block.name}: `<!-- output -->` belongs before a ```text block"


def test_quick_start_test_command_is_what_ci_runs() -> None:
    """The README's second quick-start command is the last line of .ci/run, verbatim."""
    quick = [b for b in parse(REPO / "README.md") if b.not_run_reason is not None][0]
    commands = [line for line in quick.code.splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line.strip()]
    assert commands[1] in ci, f"{commands[1]!r} is not a line of .ci/run"
