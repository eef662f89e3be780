"""The test queries (issue #34): sampled from a query log, generated from documents,
audited before anyone labels them.

Modules, low to high: ``normalize`` (what "the same query" means), ``log`` (a log as
distinct queries with counts), ``design`` (the sampling designs, numpy), ``sampling``
(:func:`sample_queries`), ``similar`` (near-duplicate pairs and copied runs of tokens),
``audit`` (:func:`audit_queries`), ``generate`` (:func:`generate_queries`, through the
judges' engine).
"""

from .audit import QueryAudit, audit_queries
from .generate import GeneratedQueries, generate_queries
from .sampling import QuerySample, sample_queries

__all__ = ["GeneratedQueries", "QueryAudit", "QuerySample", "audit_queries", "generate_queries",
           "sample_queries"]
