"""Evaluation at scale (layer 7): the same evaluation on Spark and on Dask.

``sef.spark`` and ``sef.dask`` are the modules :mod:`.spark` and :mod:`.dask`
(importing them does not import pyspark or dask; their ``evaluate`` does). A run
too big for memory on one machine needs neither: ``sef.evaluate`` on a
``pl.scan_parquet(...)`` / ``pl.scan_csv(...)`` or a Parquet path or glob evaluates
it part by part (:mod:`searcheval_frames.core.partitioned`). All three run the
package's own polars code on each part of the queries (:mod:`.partitions`), so
every per-query value is the in-memory one. See ``docs/scale.md``.
"""

from . import dask, partitions, spark

__all__ = ["dask", "partitions", "spark"]
