"""``judge``: grade (query, document) pairs with a judge, through the label journal.

Every answer is appended to the label journal (:class:`~searcheval_frames.LabelStore`:
one CRC-checked line, ``fsync``) before it counts. Each line carries a content-addressed
cache key, ``sha256(judge identity, query text, document text)`` where the identity is
the template, model and parameters (an OpenAI-compatible judge) or the function's name
and source (a function judge). Pairs whose key is already in the journal are not asked
again: a re-run, a run killed with ``kill -9`` and restarted, or another notebook on the
same journal makes no repeated call, and a changed prompt or model is a new key.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import inspect
import json
import os
import random
import time
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from ..._deprecation import outside_stacklevel
from ...errors import InvalidOptionError, SearchEvalError, SearchEvalWarning
from ...frames import input_kind, to_native
from ...options import check_bool, check_optional_int
from ..labeldb.location import is_url
from ..store import LabelStore
from .prompt import JudgeAnswerError
from .texts import as_polars, judge_pairs

__all__ = ["DryRun", "JudgeResult", "as_judge", "judge"]

_F = "judge"
_OUT_TOKENS = 8  # "##final score: 2"


class FunctionJudge:
    """A plain callable ``judge(pairs) -> frame`` seen as a judge (name, identity, batches)."""

    def __init__(self, fn: Any, batch_size: int = 32) -> None:
        self.fn = fn
        self.name = str(getattr(fn, "name", None) or getattr(fn, "__name__", None)
                        or type(fn).__name__)
        try:
            source = inspect.getsource(fn)
        except (OSError, TypeError):
            source = ""
        self.source_sha256 = hashlib.sha256(source.encode()).hexdigest()
        self.model = str(getattr(fn, "model", self.name))
        self.params: dict[str, Any] = dict(getattr(fn, "params", {}) or {})
        self.batch_size = batch_size

    def identity(self) -> dict[str, Any]:
        return {"function": self.name, "qualname": str(getattr(self.fn, "__qualname__", "")),
                "source": self.source_sha256,
                "version": str(getattr(self.fn, "version", "")), "params": self.params}


def as_judge(judge: Any) -> Any:
    """``judge`` itself if it has ``ask`` (per-pair, e.g. OpenAICompatible), else wrapped."""
    if hasattr(judge, "ask") and hasattr(judge, "identity"):
        return judge
    if not callable(judge):
        raise InvalidOptionError(
            f"judge={judge!r}: pass a function judge(pairs) -> frame with query_id, doc_id, "
            "relevance, or sef.judges.OpenAICompatible(...)"
        )
    return FunctionJudge(judge)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _keys(df: pl.DataFrame, ident: str) -> list[str]:
    # json.dumps([ident, q, t], ensure_ascii=False) written out for strings: the same text,
    # without the encoder's per-call set-up (a re-run hashes every pair)
    enc = json.encoder.encode_basestring
    head = "[" + enc(ident) + ", "
    return [_sha(head + enc(q) + ", " + enc(t) + "]") if isinstance(q, str)
            and isinstance(t, str) else _sha(json.dumps([ident, q, t], ensure_ascii=False))
            for q, t in df.select("query", "text").iter_rows()]


def _params_json(params: Any) -> str:
    """``json.dumps(params, sort_keys=True)``; most records have none."""
    return "{}" if isinstance(params, dict) and not params else json.dumps(params,
                                                                            sort_keys=True)


@dataclass
class DryRun:
    """What :func:`judge` would do: calls, tokens (estimated) and cost; no call made."""

    calls: int
    cached: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    tokenizer: str

    def __repr__(self) -> str:
        cost = "no price table" if self.cost is None else f"${self.cost:,.4f}"
        return (f"DryRun({self.calls} calls ({self.cached} cached), ~{self.input_tokens:,} "
                f"input + ~{self.output_tokens:,} output tokens [{self.tokenizer}], {cost})")


@dataclass
class JudgeResult:
    """Labels from :func:`judge`: ``.frame`` (qrels + provenance), counts and errors."""

    frame: Any
    calls: int
    cached: int
    errors: pl.DataFrame
    pending: pl.DataFrame
    stopped: str | None
    journal: Path | str
    name: str
    _polars: pl.DataFrame = field(repr=False, default_factory=pl.DataFrame)

    @property
    def qrels(self) -> pl.DataFrame:
        """``query_id, doc_id, relevance`` (polars)."""
        return self._polars.select("query_id", "doc_id", "relevance")

    def to_polars(self) -> pl.DataFrame:
        return self._polars

    def __repr__(self) -> str:
        stop = f", stopped by {self.stopped} with {self.pending.height} pending" \
            if self.stopped else ""
        return (f"JudgeResult(judge:{self.name}: {self._polars.height} labels, {self.calls} new "
                f"calls, {self.cached} from the journal, {self.errors.height} errors{stop}; "
                f"journal {str(self.journal)!r})")


def _count_tokens(texts: list[str]) -> tuple[int, str]:
    try:
        import tiktoken

        enc = tiktoken.get_encoding("cl100k_base")
        return sum(len(enc.encode(t)) for t in texts), "tiktoken cl100k_base"
    except Exception:  # not installed, or no encoding file offline
        return sum(-(-len(t) // 4) for t in texts), "characters / 4"


def _dry_run(j: Any, todo: pl.DataFrame, cached: int, prices: Any) -> DryRun:
    if hasattr(j, "template"):
        texts = [" ".join(m["content"] for m in j.template.messages(q, t))
                 for q, t in todo.select("query", "text").iter_rows()]
    else:
        texts = [f"{q} {t}" for q, t in todo.select("query", "text").iter_rows()]
    n_in, how = _count_tokens(texts)
    n_out = int(getattr(j, "output_tokens", _OUT_TOKENS)) * todo.height  # per answer
    cost = None
    if prices is not None:
        table = prices.get(getattr(j, "model", ""), prices) if isinstance(prices, dict) else None
        if not isinstance(table, dict) or not {"input", "output"} <= set(table):
            raise InvalidOptionError(
                f"prices={prices!r}: give USD per million tokens, {{'input': 0.15, 'output': "
                "0.60}, or a table {model: {'input': ..., 'output': ...}}"
            )
        cost = (n_in * float(table["input"]) + n_out * float(table["output"])) / 1e6
    return DryRun(todo.height, cached, n_in, n_out, cost, how)


def _log_error(path: Path, rec: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


class _Session:
    """One judging pass: the journal, the cache and the error log."""

    def __init__(self, j: Any, journal: Path | str, ident: str) -> None:
        self.j = j
        self.store = LabelStore(journal, assessor=f"judge:{j.name}")
        # (a server database: the error log goes to labels/ in the working directory)
        self.errors_path = (Path.cwd() / "labels" / "judge.errors" if isinstance(journal, str)
                            else journal.with_name(journal.name + ".errors"))
        self.ident = ident
        template = getattr(j, "template", None)
        self.prompt_sha256 = template.sha256 if template is not None else _sha(ident)
        self.cache: dict[str, dict[str, Any]] = {}
        self.errors: list[dict[str, Any]] = []
        self.calls = 0
        self._seen = 0
        self.refresh()

    def refresh(self) -> None:
        """Take in journal lines written since the last look (by us or another process)."""
        recs = self.store.meta_records(start=self._seen)
        for rec in recs:
            key = rec["meta"].get("key")
            if key:
                self.cache[key] = rec
        if recs:
            self._seen = recs[-1]["index"] + 1

    def record(self, answers: list[tuple[str, str, str, int, str]]) -> None:
        """Journal ``(key, query_id, doc_id, grade, rationale)`` answers: one write, one fsync."""
        metas = [{"key": key, "judge": self.j.name,
                  "model": getattr(self.j, "model", self.j.name),
                  "prompt_sha256": self.prompt_sha256, "params": getattr(self.j, "params", {}),
                  "rationale": why[:2000]} for key, _, _, _, why in answers]
        recs = self.store.append_many(
            (qid, did, grade, meta) for (_, qid, did, grade, _), meta in zip(answers, metas,
                                                                           strict=True))
        for rec, meta in zip(recs, metas, strict=True):
            self.cache[meta["key"]] = {**rec, "meta": meta}

    def fail(self, key: str, qid: str, did: str, exc: BaseException) -> None:
        rec = {"query_id": qid, "doc_id": did, "key": key, "judge": self.j.name,
               "error": f"{type(exc).__name__}: {exc}"[:1000],
               "answer": str(getattr(exc, "answer", ""))[:1000],
               "time": datetime.now(UTC).isoformat()}
        _log_error(self.errors_path, rec)
        self.errors.append(rec)


def _progress(total: int, on: bool, name: str) -> Any:
    if not on or total == 0:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, desc=f"judge:{name}", unit="pair")


def _run_ask(s: _Session, todo: list[tuple[str, str, str, str, str]], bar: Any) -> None:
    """Per-pair judges: ``max_concurrency`` requests in flight, answers journaled here."""
    j = s.j
    with cf.ThreadPoolExecutor(max_workers=j.max_concurrency) as pool:
        it = iter(todo)
        running: dict[cf.Future[Any], tuple[str, str, str]] = {}
        try:
            while True:
                while len(running) < j.max_concurrency:
                    item = next(it, None)
                    if item is None:
                        break
                    key, qid, did, q, t = item
                    if key in s.cache:  # answered meanwhile (another process)
                        continue
                    running[pool.submit(j.ask, q, t)] = (key, qid, did)
                    s.calls += 1
                if not running:
                    break
                done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                answers = []
                for fut in done:
                    key, qid, did = running.pop(fut)
                    try:
                        grade, answer = fut.result()
                    except (JudgeAnswerError, SearchEvalError) as exc:
                        s.fail(key, qid, did, exc)
                    else:
                        answers.append((key, qid, did, grade, answer))
                s.record(answers)  # the answers that arrived together: one fsync
                if bar is not None:
                    bar.update(len(done))
                s.refresh()
        finally:
            for fut in running:
                fut.cancel()


def _grades_of(out: Any, batch: pl.DataFrame, name: str) -> dict[tuple[str, str], tuple[Any, str]]:
    df = as_polars(out, f"judge {name!r} output")
    col = next((c for c in ("relevance", "grade", "label") if c in df.columns), None)
    if col is None or not {"query_id", "doc_id"} <= set(df.columns):
        raise JudgeAnswerError(
            f"judge {name!r} returned columns {df.columns}; it must return query_id, doc_id and "
            "relevance (optionally rationale)"
        )
    why = "rationale" if "rationale" in df.columns else None
    return {(str(a), str(b)): (g, str(r) if r is not None else "")
            for a, b, g, r in df.select(
                pl.col("query_id").cast(pl.String), pl.col("doc_id").cast(pl.String), col,
                pl.col(why).cast(pl.String) if why else pl.lit(None, pl.String)).iter_rows()}


def _run_function(s: _Session, todo: list[tuple[str, str, str, str, str]], kind: Any,
                  bar: Any) -> None:
    j = s.j
    for start in range(0, len(todo), j.batch_size):
        s.refresh()
        chunk = [r for r in todo[start:start + j.batch_size] if r[0] not in s.cache]
        if not chunk:
            continue
        batch = pl.DataFrame([r[1:] for r in chunk], orient="row",
                             schema=["query_id", "doc_id", "query", "text"])
        s.calls += 1
        try:
            got = _grades_of(j.fn(to_native(batch, kind)), batch, j.name)
        except Exception as exc:  # the user's function failed: recorded for each pair
            for key, qid, did, _, _ in chunk:
                s.fail(key, qid, did, exc)
            continue
        answers = []
        for key, qid, did, _, _ in chunk:
            g, why = got.get((qid, did), (None, ""))
            ok = isinstance(g, int) and not isinstance(g, bool)
            if not ok:
                s.fail(key, qid, did, JudgeAnswerError(
                    f"judge {j.name!r} gave {g!r} for ({qid!r}, {did!r}); grades are integers"))
            else:
                answers.append((key, qid, did, int(g), why))
        s.record(answers)
        if bar is not None:
            bar.update(len(chunk))


def judge(
    pairs: Any,
    judge: Any,
    *,
    queries: Any = None,
    docs: Any = None,
    journal: str | os.PathLike[str] = "labels/judge.jsonl",
    budget: int | None = None,
    dry_run: bool = False,
    progress: bool = True,
    prices: dict[str, Any] | None = None,
) -> Any:
    """Grade (query, document) pairs with an automatic judge, journaled and cached.

    Parameters
    ----------
    pairs
        Frame with ``query_id`` and ``doc_id`` (e.g. :func:`~searcheval_frames.pool`),
        optionally with the texts as ``query`` and ``text``.
    judge
        A function ``judge(pairs) -> frame`` (gets ``query_id, doc_id, query, text`` in
        batches, in the caller's frame kind; returns ``query_id, doc_id, relevance`` and
        optionally ``rationale``) or :class:`~searcheval_frames.judges.OpenAICompatible`.
    queries, docs
        Query and document texts as :func:`~searcheval_frames.label_widget` takes them (a
        frame, a dict ``{id: text}`` or a file).
    journal
        The label journal (:class:`~searcheval_frames.LabelStore`); answers are appended
        as assessor ``judge:<name>`` with their cache key and provenance. Errors go to
        ``<journal>.errors``.
    budget
        At most this many new calls (requests of a per-pair judge, batches of a function);
        the rest are left ``pending`` and a later call goes on from there.
    dry_run
        Make no call: return a :class:`DryRun` with the number of calls, estimated tokens
        (tiktoken when installed, else characters / 4) and the cost from ``prices``.
    progress
        A tqdm progress bar.
    prices
        USD per million tokens, ``{"input": 0.15, "output": 0.6}`` or ``{model: {...}}``.

    Returns
    -------
    JudgeResult or DryRun
        ``.frame``: ``query_id, doc_id, relevance, source ("judge:<name>"), model,
        prompt_sha256, params, time, rationale`` for every pair with an answer;
        ``.calls``, ``.cached``, ``.errors`` (pairs without a grade: never read as 0),
        ``.pending``, ``.stopped``.

    Notes
    -----
    Cache key: ``sha256(json([sha256(identity), query, text]))`` with identity the
    template, model and parameters. See Thomas et al., "Large language models can
    accurately predict searcher preferences", SIGIR 2024, and Upadhyay et al., "UMBRELA",
    2024, for the prompt.

    Examples
    --------
    >>> import tempfile, os, polars as pl, searcheval_frames as sef
    >>> pairs = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"],
    ...                       "query": ["bm25", "bm25"],
    ...                       "text": ["bm25 is a ranking function", "a cake recipe"]})
    >>> def overlap(p):  # a deterministic judge: 2 if the query words appear, else 0
    ...     return p.with_columns(relevance=pl.col("text").str.contains(pl.col("query")) * 2)
    >>> path = os.path.join(tempfile.mkdtemp(), "judge.jsonl")
    >>> res = sef.judge(pairs, overlap, journal=path, progress=False)
    >>> res.frame.select("doc_id", "relevance", "source").rows()
    [('d1', 2, 'judge:overlap'), ('d2', 0, 'judge:overlap')]
    >>> sef.judge(pairs, overlap, journal=path, progress=False).calls  # all cached
    0
    """
    budget = check_optional_int(_F, "budget", budget, minimum=0, example="budget=1000")
    check_bool(_F, "dry_run", dry_run)
    check_bool(_F, "progress", progress)
    kind = input_kind(pairs)
    df = judge_pairs(pairs, queries, docs)
    j = as_judge(judge)
    ident = json.dumps(j.identity(), sort_keys=True, ensure_ascii=False)
    df = df.with_columns(pl.Series("_key", _keys(df, _sha(ident)), dtype=pl.String))
    path: Path | str = str(journal) if is_url(journal) else Path(journal)  # (a URL: no path)
    if dry_run:
        seen = _seen_keys(path)
        todo = df.filter(~pl.col("_key").is_in(list(seen)))
        return _dry_run(j, todo, df.height - todo.height, prices)
    s = _Session(j, path, ident)
    todo = df.filter(~pl.col("_key").is_in(list(s.cache)))
    cached = df.height - todo.height
    rows = [(k, a, b, q, t) for a, b, q, t, k in todo.iter_rows()]
    stopped = None
    per_call = 1 if hasattr(j, "ask") else j.batch_size
    if budget is not None and len(rows) > budget * per_call:
        rows, stopped = rows[: budget * per_call], "budget"
    # each process asks in its own order: two notebooks judging the same pool at once
    # on one journal then skip each other's answers instead of asking the same pairs
    random.Random(f"{os.getpid()}-{time.time_ns()}").shuffle(rows)
    bar = _progress(len(rows), progress, j.name)
    try:
        if hasattr(j, "ask"):
            _run_ask(s, rows, bar)
        else:
            _run_function(s, rows, kind, bar)
    finally:
        if bar is not None:
            bar.close()
    return _result(s, df, kind, cached, stopped, path)


def _seen_keys(path: Path | str) -> set[str]:
    if isinstance(path, Path) and not path.exists():
        return set()
    return {r["meta"]["key"] for r in LabelStore(path).meta_records() if "key" in r["meta"]}


def _result(s: _Session, df: pl.DataFrame, kind: Any, cached: int, stopped: str | None,
            path: Path | str) -> JudgeResult:
    got = [(a, b, s.cache[k]) for a, b, k in df.select("query_id", "doc_id", "_key").iter_rows()
           if k in s.cache]
    frame = pl.DataFrame(
        [(a, b, int(r["label"]), f"judge:{r['meta'].get('judge', s.j.name)}",
          str(r["meta"].get("model", "")), str(r["meta"].get("prompt_sha256", "")),
          _params_json(r["meta"].get("params", {})), r["time"],
          str(r["meta"].get("rationale", ""))) for a, b, r in got],
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64,
                "source": pl.String, "model": pl.String, "prompt_sha256": pl.String,
                "params": pl.String, "time": pl.String, "rationale": pl.String},
        orient="row",
    )
    answered = set(s.cache)
    pending = df.filter(~pl.col("_key").is_in(list(answered))).select("query_id", "doc_id")
    errors = pl.DataFrame(s.errors, schema={c: pl.String for c in (
        "query_id", "doc_id", "key", "judge", "error", "answer", "time")}, orient="row"
    ) if s.errors else pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                            "error": pl.String})
    if s.errors:
        warnings.warn(
            f"judge: {len(s.errors)} pair(s) got no grade (recorded in {s.errors_path}; see "
            f".errors); they have no label, never 0. Run sef.judge again to retry them. "
            f"First: {s.errors[0]['error'][:200]}",
            SearchEvalWarning,
            stacklevel=outside_stacklevel(),
        )
    return JudgeResult(frame=to_native(frame, kind), calls=s.calls, cached=cached,
                       errors=errors.select("query_id", "doc_id", "error"), pending=pending,
                       stopped=stopped, journal=path, name=s.j.name, _polars=frame)
