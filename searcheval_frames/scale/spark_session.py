"""A local Spark session for notebooks and tests, with Spark's known-harmless noise handled.

With pandas >= 3, pyspark 4.0 warns on every pandas conversion that it "does not yet
fully support pandas >= 3.0.0" (a ``FutureWarning``, shown in red under each notebook
cell that converts), and Spark draws stage progress bars. Neither changes a number here:
the conversions this package makes (``createDataFrame`` of plain string / integer /
float columns, ``toPandas`` of the results) are checked value for value against the
in-memory evaluation by ``tests/test_spark.py`` and notebook 05. :func:`local_session`
therefore ignores exactly that pyspark warning (a ``warnings`` filter on its message),
turns the progress bars off and sets Spark's log level to ERROR once it runs; every
other warning and every error still shows. (The JVM's own start-up lines — "Setting
default log level to WARN" — go to the terminal that started Jupyter, not to the
notebook.)
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

from ..optional import require

__all__ = ["HARMLESS_WARNINGS", "local_session"]

#: message patterns of pyspark warnings known to be harmless here (see the module text)
HARMLESS_WARNINGS = (r".*does not yet fully support pandas >= 3",)



def local_session(master: str = "local[2]", *, shuffle_partitions: int = 2,
                  quiet: bool = True) -> Any:
    """A ``SparkSession`` on this machine, configured for small evaluation jobs.

    Parameters
    ----------
    master
        Spark's master URL (default two local cores).
    shuffle_partitions
        ``spark.sql.shuffle.partitions`` (Spark's default 200 is slow for small runs).
    quiet
        Ignore pyspark's pandas-3 warning (:data:`HARMLESS_WARNINGS`) and set Spark's
        log level to ERROR; errors are still printed.

    Returns
    -------
    pyspark.sql.SparkSession
        Stop it with ``spark.stop()``.

    Examples
    --------
    >>> import searcheval_frames as sef        # doctest: +SKIP
    >>> spark = sef.spark.local_session()      # doctest: +SKIP
    """
    sql = require("pyspark.sql", "sef.spark.local_session")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (sql.SparkSession.builder.master(master)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(shuffle_partitions)))
    if quiet:
        for pattern in HARMLESS_WARNINGS:
            warnings.filterwarnings("ignore", message=pattern, category=FutureWarning)
    spark = builder.getOrCreate()
    if quiet:
        spark.sparkContext.setLogLevel("ERROR")
    return spark
