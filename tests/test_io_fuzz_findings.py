"""Regression tests for what tests/test_fuzz_readers.py found in the readers (issue #15)."""

from __future__ import annotations

import gzip
import zlib

import pytest

import searcheval_frames as sef
from searcheval_frames.errors import FileFormatError


@pytest.mark.parametrize("name", ["r.run", "r.run.gz"])
def test_corrupt_deflate_data_is_a_file_format_error(tmp_path, name):
    """A gzip stream whose deflate data is corrupt raised zlib.error, not a SearchEvalError."""
    # (found by the fuzzer) zlib: "invalid distance too far back"
    data = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03c\xd8\xbd\xdfP!\xd0\x00!\xc5P\xc1P"
            b"\xc1\x80\x0b\x00,\xa1\xfb\x86\x0f\x00\x00\x00")
    with pytest.raises(zlib.error):
        gzip.decompress(data)
    path = tmp_path / name
    path.write_bytes(data)
    for read in (sef.read_run, sef.read_qrels, sef.read_queries):
        with pytest.raises(FileFormatError, match="gzip data is corrupt") as info:
            read(path)
        assert info.value.path == str(path)
