"""Every label journal the test suite writes is imported into a database and compared,
label by label (issue #33: nothing already labelled is lost).

A pytest plugin (``pytest_plugins`` in conftest.py): after each test that used
``tmp_path``, every ``*.jsonl`` journal left there is read by the journal reader
(:class:`JournalStore`) and imported into a fresh SQLite database
(:meth:`LabelStore.import_journal`); the current labels must be the same rows in the same
order (ids, assessor, label, time), every complete line an event, the automatic judges'
cache keys the same, and importing again must add nothing. A journal the reader refuses
(a line damaged on purpose) must be refused by the import too, naming the same line.
Set ``SEF_JOURNAL_IMPORT_LOG=file`` to append one line per journal checked.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import pytest


def _is_journal(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(200)
    except OSError:
        return False
    return head.startswith(b"{") and b'"query_id"' in head and b'"label"' in head


def check_journal(path: Path) -> str:
    from searcheval_frames.errors import FileFormatError
    from searcheval_frames.evalset.store import JournalStore, LabelStore

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a torn tail is warned about by the reader)
        try:
            journal = JournalStore(path)
            want = journal.labels()
            keys = [r["meta"]["key"] for r in journal.meta_records() if r["meta"].get("key")]
        except (KeyError, TypeError, ValueError) as exc:
            if not isinstance(exc, FileFormatError):
                return "not a label journal"  # (a JSON-lines file of something else)
            assert isinstance(exc, FileFormatError)
            with (tempfile.TemporaryDirectory() as d, LabelStore(Path(d) / "x.db") as db,
                  pytest.raises(FileFormatError) as err):
                db.import_journal(path)
            assert f":{exc.line_no}:" in str(err.value), (str(exc), str(err.value))
            return "refused alike"
    with tempfile.TemporaryDirectory() as d, LabelStore(Path(d) / "x.db") as db:
        got = db.import_journal(path)
        assert got.added == got.lines - _blank_lines(path), got
        assert db.labels().rows() == want.rows(), path
        assert [r["meta"]["key"] for r in db.meta_records() if r["meta"].get("key")] == keys
        assert db.import_journal(path).added == 0
        return f"{want.height} labels"


def _blank_lines(path: Path) -> int:
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    return sum(1 for line in complete.split(b"\n")[:-1] if not line.strip())


@pytest.fixture(autouse=True)
def _journals_import_into_a_database(request):
    if "tmp_path" not in request.fixturenames:
        yield
        return
    tmp = request.getfixturevalue("tmp_path")
    yield
    log = os.environ.get("SEF_JOURNAL_IMPORT_LOG")
    for path in sorted(Path(tmp).rglob("*.jsonl")):
        if not path.is_file() or not _is_journal(path):
            continue
        what = check_journal(path)
        if log:
            with open(log, "a") as fh:
                fh.write(f"{request.node.nodeid}\t{path.relative_to(tmp)}\t{what}\n")
