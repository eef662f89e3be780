"""Write a synthetic query log: ``data/example/query_log.tsv`` (issue #34).

Run from the repository root::

    python data/make_query_log.py

One row per search, columns ``query`` (as typed) and ``intent`` (the bundled query,
``data/example/queries.tsv``, that the search means). Made by this project, deterministic
(seeded), no third-party data:

* the searches: the 38 bundled queries and one or two hand-written paraphrases of each
  (``PARAPHRASES``), every one a distinct query of the log, with Zipf-distributed
  frequencies: the query at popularity rank r gets ``round(A / r**S)`` searches (at
  least 1), ranks in a seeded random order;
* typed variants: each search is typed as the query is, or in lower case, in upper
  case, with doubled or padding whitespace, with a non-breaking space, or in full-width
  letters (Unicode NFKC folds them back), so that counting exercises normalisation.

The file stays small (about 12,000 rows, under 500 kB).
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent / "example"
SEED = 34
A, S = 2500.0, 1.05

PARAPHRASES = {
    "q01": ["pinecone tutorial", "getting started with pinecone"],
    "q02": ["hnsw vs ivf"], "q03": ["retrieval augmented generation explained"],
    "q04": ["bm25 parameters k1 b"], "q05": ["best chunk size for rag"],
    "q06": ["reranking with a cross encoder"], "q07": ["hybrid search keyword plus vector"],
    "q08": ["ndcg"], "q09": ["what is mrr"], "q10": ["lemmatization or stemming"],
    "q11": ["pgvector hnsw or ivfflat"], "q12": ["slow vector search"],
    "q13": ["chatbot over company documents"], "q14": ["elasticsearch custom analyzer"],
    "q15": ["pooling for test collections"], "q16": ["synonym expansion search"],
    "q17": ["cosine vs dot product"], "q18": ["search result caching"],
    "q19": ["inter annotator agreement relevance"], "q20": ["qdrant filter by payload"],
    "q21": ["best embedding model"], "q22": ["opensearch knn"],
    "q23": ["ndcg significance test"], "q24": ["rm3 pseudo relevance feedback"],
    "q25": ["multilingual search"], "q26": ["part number search semantic fails"],
    "q27": ["vector index memory"], "q28": ["unjudged documents evaluation"],
    "q29": ["trec_eval file format"], "q30": ["vector db pricing"],
    "q31": ["duplicate results in search"], "q32": ["position bias clicks"],
    "q33": ["learning to rank features"], "q34": ["index refresh delay new documents"],
    "q35": ["multi tenant index"], "q36": ["faceted search brand price"],
    "q37": ["colbert late interaction"], "q38": ["offline evaluation before launch",
                                                  "a/b test ranking change"],
}


def _full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _typed(text: str, rng: random.Random) -> str:
    """One way a user typed ``text``."""
    r = rng.random()
    if r < 0.55:
        return text
    if r < 0.75:
        return text.lower()
    if r < 0.80:
        return text.upper()
    if r < 0.88:
        return text.replace(" ", "  ", 1)
    if r < 0.93:
        return f" {text} "
    if r < 0.97:
        return text.replace(" ", "\u00a0", 1)
    return _full_width(text)


def main() -> None:
    rng = random.Random(SEED)
    with open(HERE / "queries.tsv", encoding="utf-8") as fh:
        bundled = [(r["query_id"], r["query"]) for r in csv.DictReader(fh, delimiter="\t")]
    distinct = [(qid, q) for qid, q in bundled]
    distinct += [(qid, p) for qid, _ in bundled for p in PARAPHRASES.get(qid, [])]
    ranks = list(range(1, len(distinct) + 1))
    rng.shuffle(ranks)
    rows = []
    for (intent, text), rank in zip(distinct, ranks, strict=True):
        for _ in range(max(1, round(A / rank**S))):
            rows.append((_typed(text, rng), intent))
    rng.shuffle(rows)
    out = HERE / "query_log.tsv"
    with open(out, "w", encoding="utf-8", newline="") as fh:
        fh.write("query\tintent\n")
        for q, intent in rows:
            fh.write(f"{q}\t{intent}\n")
    print(f"wrote {out} ({len(rows)} searches, {len(distinct)} distinct queries)")


if __name__ == "__main__":
    main()
