"""``searcheval retrieve`` run as a process against the test service, and a retrieval
process killed (SIGKILL) at random moments and resumed: no answered query asked again,
the final run equal to an uninterrupted one."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

import searcheval_frames as sef

REPO = Path(__file__).resolve().parents[1]
QUERIES = REPO / "data" / "example" / "queries.tsv"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "searcheval_frames", "retrieve", *args],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def toml(path: Path, url: str, extra: str = "") -> Path:
    path.write_text(f'adapter = "http"\nurl = "{url}/search"\nname = "svc"\n'
                    f'server_time = "took"\n{extra}\n[params]\nq = "{{query}}"\nk = "{{k}}"\n',
                    encoding="utf-8")
    return path


def test_the_cli_writes_the_run_its_latency_and_provenance(search_service, tmp_path):
    svc = search_service
    system = toml(tmp_path / "svc.toml", svc.url)
    done = cli(str(system), str(QUERIES), "-k", "5", "-o", "out/run.tsv",
               "--max-concurrency", "4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "svc: 38 queries" in done.stdout
    run = sef.read_run(tmp_path / "out" / "run.tsv")
    for qid, text in sef.read_queries(QUERIES).select("query_id", "query").iter_rows():
        want = [d for d, _ in svc.index.search(text, 5)]
        got = run.filter(pl.col("query_id") == qid).sort("rank")["doc_id"].to_list()
        assert got == want
    lat = pl.read_csv(tmp_path / "out" / "run.latency.tsv", separator="\t")
    assert lat.height == 38 and set(lat["status"]) == {"ok"}
    prov = json.loads((tmp_path / "out" / "run.provenance.json").read_text())
    assert prov["adapter"] == "http" and prov["k"] == 5
    assert (tmp_path / ".searcheval" / "retrieve-cache.db").exists()
    n = len(svc.requests)
    again = cli(str(system), str(QUERIES), "-k", "5", "-o", "out/run2.tsv", cwd=tmp_path)
    assert again.returncode == 0 and len(svc.requests) == n  # all from the cache


def test_the_cli_fails_in_one_line(search_service, tmp_path):
    svc = search_service
    cases = {
        "bad.toml": ('adapter = "http"\nurl = ', "not valid TOML"),
        "unknown.toml": ('adapter = "solr"\n', "adapter = 'solr' is not an adapter"),
        "key.toml": (f'adapter = "http"\nurl = "{svc.url}/search"\nhitz = "x"\n',
                     "does not take ['hitz']"),
        "option.toml": (f'adapter = "http"\nurl = "{svc.url}/search"\n[retrieve]\nk = 0\n',
                        "retrieve(k=0)"),
    }
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        done = cli(name, str(QUERIES), "-o", "r.tsv", cwd=tmp_path)
        assert done.returncode == 1, (name, done.stderr)
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert cli("key.toml", cwd=tmp_path).returncode == 2  # usage


def test_failed_queries_exit_1_and_the_answered_ones_are_written(search_service, tmp_path):
    svc = search_service
    first = sef.read_queries(QUERIES)["query"][0]
    svc.fault("status", query=first, code=500)
    system = toml(tmp_path / "svc.toml", svc.url)
    done = cli(str(system), str(QUERIES), "-o", "r.tsv", "--no-cache", cwd=tmp_path)
    assert done.returncode == 1
    assert "1 of 38 queries failed, e.g. q01 (error: HTTP 500" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert sef.read_run(tmp_path / "r.tsv")["query_id"].n_unique() == 37
    system.write_text('adapter = "http"\nurl = "http://127.0.0.1:9/search"\n')  # nobody there
    done = cli(str(system), str(QUERIES), "-o", "none.tsv", "--no-cache", "--retries", "0",
               cwd=tmp_path)
    assert done.returncode == 1 and "none.tsv was not written" in done.stderr
    assert (tmp_path / "none.latency.tsv").exists() and not (tmp_path / "none.tsv").exists()


def _cached(db: Path) -> set[str]:
    if not db.exists():
        return set()
    with sqlite3.connect(db) as con:
        return {q for (q,) in con.execute("SELECT query FROM answers")}


def test_a_killed_retrieval_resumes_without_asking_again(search_service, tmp_path):
    svc = search_service
    svc.delay = 0.02
    # 150 distinct queries from the bundled documents' titles
    docs = [json.loads(line) for line in (REPO / "data/example/docs.jsonl").read_text().splitlines()]
    texts = sorted({" ".join(d["title"].split()[:4]) for d in docs} |
                   {" ".join(d["title"].split()[-3:]) for d in docs})[:150]
    qfile = tmp_path / "queries.tsv"
    qfile.write_text("query_id\tquery\n" + "".join(f"q{i}\t{t}\n" for i, t in enumerate(texts)))
    system = toml(tmp_path / "svc.toml", svc.url)
    db = tmp_path / "cache.db"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "searcheval_frames", "retrieve", str(system), str(qfile),
           "-o", str(tmp_path / "run.tsv"), "--cache", str(db), "--max-concurrency", "4"]
    rng = random.Random(32)
    rounds, partial = [], 0
    for round_ in range(5):
        before = _cached(db)
        start_log = len(svc.requests)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        if round_:  # the first kill at a random moment of the start, the others of the asking
            deadline = time.monotonic() + 60
            while len(svc.requests) == start_log and time.monotonic() < deadline:
                time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        time.sleep(0.1)  # in-flight requests reach the log
        asked = [q for r in svc.requests[start_log:] for q in r["queries"]]
        rounds.append((before, asked))
        partial += 0 < len(_cached(db)) < len(texts)
        if len(_cached(db)) == len(texts):
            break
    start_log = len(svc.requests)
    final = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    rounds.append((None, [q for r in svc.requests[start_log:] for q in r["queries"]]))
    assert partial >= 1  # at least one kill landed in the middle of the run
    for i, (before, asked) in enumerate(rounds):
        cached_then = before if before is not None else set()
        assert not cached_then & set(asked), f"round {i} asked answered queries again"
    everything = [q for _, asked in rounds for q in asked]
    repeats = len(everything) - len(set(everything))
    print(f"kill test: {len(rounds) - 1} kills, asks per round {[len(a) for _, a in rounds]}, "
          f"cached before each {[len(b) if b is not None else '-' for b, _ in rounds]}, "
          f"{repeats} queries asked twice (in flight at a kill)")
    assert repeats <= 4 * len(rounds)  # only requests in flight at a kill are asked again
    assert set(everything) == set(texts)
    # the final run equals an uninterrupted one
    whole = cli(str(system), str(qfile), "-o", "whole.tsv", "--cache", str(tmp_path / "w.db"),
                "--max-concurrency", "4", cwd=tmp_path)
    assert whole.returncode == 0
    a = sef.read_run(tmp_path / "run.tsv").sort("query_id", "rank")
    b = sef.read_run(tmp_path / "whole.tsv").sort("query_id", "rank")
    assert a.equals(b)
