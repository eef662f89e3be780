"""Ranking in trec_eval order and the one grouped evaluation pass (layer 3)."""
