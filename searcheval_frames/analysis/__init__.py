"""Comparisons, statistics and report tables over per-query results (layer 5)."""
