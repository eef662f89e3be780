"""A local Spark session for notebooks and tests, with Spark's known-harmless noise handled.

With pandas >= 3, pyspark 4.0 warns on every pandas conversion that it "does not yet
fully support pandas >= 3.0.0" (a ``FutureWarning``, shown in red under each notebook
cell that converts), and Spark draws stage progress bars. Neither changes a number here:
the conversions this package makes (``createDataFrame`` of plain string / integer /
float columns, ``toPandas`` of the results) are checked value for value against the
in-memory evaluation by ``tests/test_spark.py`` and notebook 05. :func:`local_session`
therefore ignores exactly that pyspark warning (a ``warnings`` filter on its message),
turns the progress bars off and starts the JVM with a log4j2 configuration at level
ERROR (``SPARK_CONF_DIR``, unless you set your own), so JupyterLab does not show Spark's
start-up WARN lines in red under the cell; every other warning and every error still
shows. The JVM's own one-line note "Using incubator modules: jdk.incubator.vector"
(printed by Java itself for Spark's vector module) is not a log line and may remain.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

from ..optional import require

__all__ = ["HARMLESS_WARNINGS", "LOG4J2", "local_session"]

#: message patterns of pyspark warnings known to be harmless here (see the module text)
HARMLESS_WARNINGS = (r".*does not yet fully support pandas >= 3",)

#: the driver's log4j2 configuration with ``quiet=True``: errors only, to stderr
LOG4J2 = """# root at WARN, as Spark's shell level (else Spark prints "Setting default log
# level"); the console shows ERROR and above only
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
"""


def _quiet_conf_dir() -> str:
    """A Spark conf folder holding only :data:`LOG4J2` (Spark reads ``log4j2.properties``
    from ``SPARK_CONF_DIR`` when the JVM starts, before any session option applies)."""
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.gettempdir()) / "searcheval_frames-spark-conf"
    folder.mkdir(exist_ok=True)
    conf = folder / "log4j2.properties"
    if not conf.exists() or conf.read_text() != LOG4J2:
        conf.write_text(LOG4J2)
    return str(folder)



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
        Ignore pyspark's pandas-3 warning (:data:`HARMLESS_WARNINGS`) and log at level
        ERROR from the JVM's start (:data:`LOG4J2`); errors are still printed.

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
        # the JVM's start-up lines ("Using Spark's default log4j profile", hostname and
        # native-hadoop WARNs) would show in red under the notebook cell; a conf folder
        # of the user's own (SPARK_CONF_DIR set) is left alone
        os.environ.setdefault("SPARK_CONF_DIR", _quiet_conf_dir())
    spark = builder.getOrCreate()
    if quiet:
        spark.sparkContext.setLogLevel("ERROR")
    return spark
