"""Writers are atomic: a writer killed (SIGKILL) mid-write leaves the old file or the new one.

A subprocess writes a big file over and over (version 1, 2, 3, ...); the test kills it
at random moments and then reads the target: it must be a complete file of some
version, equal to what that version's writer was given (parsed and compared), never a
truncated or mixed file; temporary files a killed writer leaves are hidden
(``.name.*.tmp``) and never the target.

To cover another writer (the label sheet, the label store's compact, the report, the
figures), add a :class:`Writer` to ``WRITERS``: a module-level ``write(path, version)``
and ``read(path) -> version`` (raising when the file is not the complete file of that
version).
"""

from __future__ import annotations

import os
import pickle
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

import searcheval_frames as sef

ROWS = 60_000  # rows per version: a file of ~1-2 MB, written in tens of milliseconds
KILLS = 8  # per writer (3 writers: 24 kills)
BUDGET_S = 20.0  # per writer, kills and checks included (a busy host slows writes)
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Writer:
    name: str
    write: Callable[[Path, int], None]  # writes version `version` to the path
    read: Callable[[Path], int]  # the version in the file; raises if it is not complete
    file_name: str


# --------------------------------------------------------------------------- runs
def run_version(version: int, rows: int = ROWS // 3) -> pl.DataFrame:
    # (a third of ROWS: the gzip of a run file, at level 9, is the slowest write here)
    return pl.DataFrame({"run": [f"v{version}"] * rows,
                         "query_id": [str(i // 100) for i in range(rows)],
                         "doc_id": [f"d{i}" for i in range(rows)],
                         "score": [(i % 100) * 0.5 + version for i in range(rows)]})


def write_run(path: Path, version: int) -> None:
    sef.write_run(run_version(version), path)


def read_run(path: Path) -> int:
    got = sef.read_run(path).sort("query_id", "doc_id")
    version = int(got["run"][0][1:])
    want = run_version(version).sort("query_id", "doc_id")
    assert got.select(want.columns).equals(want), f"{path}: not the complete version {version}"
    return version


# --------------------------------------------------------------------------- qrels
def qrels_version(version: int) -> pl.DataFrame:
    return pl.DataFrame({"query_id": [str(i // 100) for i in range(ROWS)],
                         "doc_id": [f"d{i}" for i in range(ROWS)],
                         "relevance": [version] * ROWS})


def write_qrels(path: Path, version: int) -> None:
    sef.write_qrels(qrels_version(version), path)


def read_qrels(path: Path) -> int:
    got = sef.read_qrels(path)
    version = int(got["relevance"][0])
    assert got.equals(qrels_version(version)), f"{path}: not the complete version {version}"
    return version


# --------------------------------------------------------------------------- queries
def queries_version(version: int) -> dict[str, str]:
    return {str(i): f"query {i} of version {version}" for i in range(ROWS // 2)}


def write_queries(path: Path, version: int) -> None:
    sef.write_queries(queries_version(version), path)


def read_queries(path: Path) -> int:
    got = sef.read_queries(path)
    version = int(got["query"][0].rsplit(" ", 1)[1])
    want = queries_version(version)
    assert dict(got.iter_rows()) == want, f"{path}: not the complete version {version}"
    return version


# --------------------------------------------------------------------------- label sheets
def sheet_pool(version: int) -> pl.DataFrame:
    n = ROWS // 3
    return pl.DataFrame({"query_id": [f"q{i % 100}" for i in range(n)],
                         "doc_id": [f"d{i}-v{version}" for i in range(n)]})


def write_sheet(path: Path, version: int) -> None:
    sef.export_label_sheet(sheet_pool(version), path)


def read_sheet(path: Path) -> int:
    got = pl.read_csv(path, infer_schema=False)
    version = int(got["doc_id"][0].rsplit("-v", 1)[1])
    want = sheet_pool(version)
    assert got.select("query_id", "doc_id").equals(want), f"{path}: not version {version}"
    return version


# --------------------------------------------------------------------------- figures
def write_figure(path: Path, version: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot(range(2000), [i % 97 for i in range(2000)])
    ax.set_title(f"version {version} end")
    sef.save_figure(fig, path)
    plt.close(fig)


def read_figure(path: Path) -> int:
    import re
    import xml.etree.ElementTree as ET

    text = path.read_text(encoding="utf-8")
    ET.fromstring(text)  # a truncated SVG does not parse
    found = re.findall(r"version (\d+) end", text)  # matplotlib keeps text as a comment
    assert found, f"{path}: no title"
    return int(found[0])


WRITERS = [
    Writer("write_run (gzip)", write_run, read_run, "run.txt.gz"),
    Writer("write_qrels", write_qrels, read_qrels, "qrels.txt"),
    Writer("write_queries (gzip)", write_queries, read_queries, "queries.tsv.gz"),
    Writer("export_label_sheet", write_sheet, read_sheet, "sheet.csv"),
    Writer("save_figure (svg)", write_figure, read_figure, "figure.svg"),
]

#: A helper process that imports the writers once, then forks one writer child per
#: ``go <first version>`` line (before any polars thread exists: fork is safe) and answers
#: with the child's pid once the child runs. Children are reaped by SIGCHLD=SIG_IGN.
ZYGOTE = """
import os, pickle, signal, sys
sys.path[:0] = [{here!r}, {root!r}]
write = pickle.loads(bytes.fromhex(sys.argv[1]))
target = sys.argv[2]
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
print("ready", flush=True)
for line in sys.stdin:
    first = int(line.split()[1])
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, b"x")
        os.close(w)
        version = first
        while True:
            write(target, version)
            version += 1
    os.close(w)
    os.read(r, 1)
    os.close(r)
    print(pid, flush=True)
"""


class Zygote:
    def __init__(self, writer: Writer, target: Path) -> None:
        code = ZYGOTE.format(here=str(HERE), root=str(HERE.parent))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, pickle.dumps(writer.write).hex(), str(target)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ))
        assert self.proc.stdout is not None and self.proc.stdin is not None
        assert self.proc.stdout.readline().strip() == b"ready"

    def start(self, first: int) -> int:
        """Fork a writer of versions first, first + 1, ...; its pid."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"go {first}\n".encode())
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):  # else ResourceWarnings later
            if pipe is not None:
                pipe.close()


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    for _ in range(1000):  # until reaped (by the zygote)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.005)
    raise AssertionError(f"writer {pid} still alive after SIGKILL")


@pytest.mark.slow
@pytest.mark.parametrize("writer", WRITERS, ids=[w.name for w in WRITERS])
def test_a_killed_writer_leaves_the_old_or_the_new_file(tmp_path, writer):
    folder, scratch = tmp_path / "target", tmp_path / "scratch"
    folder.mkdir()
    scratch.mkdir()
    target = folder / writer.file_name
    t0 = time.monotonic()
    writer.write(scratch / writer.file_name, 1)
    took = time.monotonic() - t0  # one write here: the kills fall within ~2 writes
    writer.write(target, 0)
    assert writer.read(target) == 0
    zygote = Zygote(writer, target)
    rng = random.Random(15)
    scale = 2.5 * took  # kill after a random delay in [0, scale]
    start = time.monotonic()
    kills = new = mid_write = 0
    try:
        # KILLS kills, more (up to 4 times as many: a plain file's temporary file lives
        # for ~20% of a write) until one landed mid-write and one after a rename
        while (kills < KILLS or not (new and mid_write)) and kills < 4 * KILLS and (
                time.monotonic() - start < BUDGET_S):
            first = (kills + 1) * 1000  # this child writes versions first, first + 1, ...
            pid = zygote.start(first)
            time.sleep(rng.uniform(0.0, scale))
            kill(pid)
            kills += 1
            version = writer.read(target)  # complete, of one version
            assert version == 0 or version >= 1000
            new += version >= first
            if version < first:  # no write finished: a forked child's first write is
                scale = min(1.5 * scale, 3.0)  # slower (cold), wait longer next time
            visible = [p.name for p in folder.iterdir() if not p.name.startswith(".")]
            assert visible == [target.name], visible
            hidden = [p for p in folder.iterdir() if p.name.startswith(".")]
            assert all(h.name.startswith(f".{target.name}.") and h.name.endswith(".tmp")
                       for h in hidden)
            mid_write += bool(hidden)  # killed while writing its temporary file
            for h in hidden:
                h.unlink()
    finally:
        zygote.close()
    counts = (f"{kills} kills (one write: {took:.2f} s): {new} found a new version, "
              f"{mid_write} hit a write")
    print(f"{writer.name}: {counts}")
    assert kills >= 3, counts
    assert new >= 1 and mid_write >= 1, counts  # (the kills did land during writes)
