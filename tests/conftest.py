"""Shared fixtures: where the repo and the read-only ../shared test material live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: every label journal a test leaves in its tmp_path is imported into a database and
#: compared label by label (issue #33)
pytest_plugins = ["journal_import_check"]

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
SHARED = Path(os.environ.get("SEARCHEVAL_SHARED", REPO.parent / "shared")).resolve()
SHARED_DATA = SHARED / "data"


def shared_path(*parts: str) -> Path:
    """Path inside ../shared/data; skips the calling test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared test material not present ({path})")
    return path


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip("../shared test material not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def postgres_server():
    """One real PostgreSQL server for this test process (tests/pg_server.py)."""
    from pg_server import PostgresServer

    server = PostgresServer()
    yield server
    server.close()


@pytest.fixture
def postgres_dsn(postgres_server) -> str:
    """A fresh, empty PostgreSQL database on the session's server: its DSN."""
    return postgres_server.create_database()


@pytest.fixture(scope="session")
def search_server():
    """One HTTP search service on 127.0.0.1 for this test process (tests/search_service.py):
    SQLite FTS5 over the bundled docs, with fault injection, a request log and an
    Elasticsearch-compatible _search/_msearch surface."""
    from search_service import SearchService

    service = SearchService().start()
    yield service
    service.stop()


@pytest.fixture
def search_service(search_server):
    """The session's search service, reset (no faults, no delay, an empty log) per test."""
    search_server.reset()
    yield search_server
    search_server.reset()
