"""Build the small RAG-shaped example in ``data/rag/`` (deterministic, no downloads).

Run from the repository root::

    python data/make_rag_example.py

What a retrieval-augmented-generation team has at hand, in the shape they have it:

* ``chunks.jsonl``  the chunked help centre of a made-up product: ``url`` (page URL +
  ``#section``, the doc id), ``title``, ``text``;
* ``questions.tsv`` 25 user questions; the question text itself is the query id
  (``question``), as RAG logs keep it;
* ``grades.csv``    graded labels ``question, url, grade`` (0-3): 3 the chunk that
  answers, 2 another section of the answering page, 1 a page of the same area,
  0 judged and off-topic — every chunk any system retrieves is graded;
* ``runs.csv``      three retrievers' top 10 per question, ``system, question, url,
  similarity``: ``keyword`` (BM25 over chunk words), ``embedding`` (cosine of
  character-trigram vectors, a stand-in for a dense encoder) and ``hybrid``
  (reciprocal rank fusion of the two with :func:`searcheval_frames.fuse`).

The column names are not the canonical ones on purpose: read them with
``columns={"run": "system", "query_id": "question", "doc_id": "url",
"score": "similarity", "relevance": "grade"}`` (see ``COLUMNS``).
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "rag"
sys.path.insert(0, str(ROOT.parent))

COLUMNS = {"run": "system", "query_id": "question", "doc_id": "url", "score": "similarity",
           "relevance": "grade"}
BASE = "https://help.example-notes.app/docs"
#: page path -> (area, title, {section anchor: text})
PAGES: dict[str, tuple[str, str, dict[str, str]]] = {
    "account/sign-in/single-sign-on-with-saml": ("account", "Single sign-on with SAML", {
        "configure-the-identity-provider": "In your identity provider create a SAML app, set the ACS URL to the workspace login address and upload the certificate. Okta and Azure AD are supported.",
        "enforce-sso-for-everyone": "Admins can enforce single sign-on so that members must log in through the identity provider; passwords stop working once SSO is enforced.",
        "troubleshooting-login-loops": "A login loop after SSO usually means the clock of the identity provider is off or the certificate expired; renew the certificate and retry.",
    }),
    "account/security/two-factor-authentication": ("account", "Two-factor authentication", {
        "turn-on-2fa": "Open Settings, Security and turn on two-factor authentication with an authenticator app; scan the QR code and enter the six digit code.",
        "recovery-codes": "Recovery codes let you sign in when you lose your phone. Download them when you turn on 2FA and keep them somewhere safe.",
        "lost-phone": "If you lost your phone and your recovery codes, an admin of your workspace can reset two-factor authentication for you.",
    }),
    "billing/plans-and-invoices/change-your-plan": ("billing", "Change your plan", {
        "upgrade-or-downgrade": "Upgrade or downgrade the plan from Billing; an upgrade is charged pro rata at once, a downgrade takes effect at the next renewal.",
        "download-invoices": "Every invoice is a PDF under Billing, Invoices; add a VAT number and billing address before the invoice is issued.",
        "cancel-subscription": "Cancel the subscription from Billing; the workspace stays on the paid plan until the end of the period, then becomes read only.",
    }),
    "billing/payments/failed-card-payments": ("billing", "Failed card payments", {
        "why-payments-fail": "Card payments fail when the card expired, the bank declined 3-D Secure or the billing address does not match.",
        "retry-schedule": "After a failed payment we retry the card after 3, 5 and 7 days and email the billing owner each time.",
    }),
    "notes/organise/tags-and-nested-folders": ("notes", "Tags and nested folders", {
        "create-nested-folders": "Drag a folder onto another to nest it; folders can be nested five levels deep and sorted by name or date.",
        "tag-many-notes-at-once": "Select several notes with shift click and choose Add tag to tag many notes at once; tags are case insensitive.",
        "smart-folders": "A smart folder shows every note matching a saved search, for example all notes tagged meeting from this week.",
    }),
    "notes/sharing/share-a-note-with-a-public-link": ("notes", "Share a note with a public link", {
        "create-a-public-link": "Choose Share, Create link to publish a read only copy of a note; anyone with the link can read it without an account.",
        "expire-or-revoke-links": "Public links can expire after a number of days; revoke a link at any time and the page stops loading.",
        "password-protect": "On the Business plan a public link can require a password before the note is shown.",
    }),
    "notes/sync/offline-mode-and-conflicts": ("notes", "Offline mode and sync conflicts", {
        "work-offline": "The desktop and mobile apps keep every note offline; edits sync when the device is back online.",
        "resolve-conflicts": "When the same note changed on two devices a conflict copy is created; merge the two versions and delete the copy.",
    }),
    "integrations/api/rate-limits-and-pagination": ("integrations", "API rate limits and pagination", {
        "rate-limits": "The REST API allows 300 requests per minute per token; a 429 response carries a Retry-After header in seconds.",
        "pagination": "List endpoints return 100 items per page and a next cursor; pass the cursor to fetch the next page until it is empty.",
        "api-tokens": "Create a personal API token under Settings, Developer; tokens can be read only and expire after a year.",
    }),
    "integrations/webhooks/receive-events-with-webhooks": ("integrations", "Receive events with webhooks", {
        "subscribe-to-events": "Register a webhook URL and choose the events, such as note created or note deleted, to receive a JSON POST.",
        "verify-signatures": "Each webhook request is signed with HMAC SHA-256 in the X-Signature header; compute it with your secret to verify.",
        "retries-and-failures": "A webhook that does not answer 2xx within 10 seconds is retried with exponential backoff for 24 hours.",
    }),
    "data/export/export-all-notes-to-markdown": ("data", "Export all notes to Markdown", {
        "export-a-workspace": "Admins export the whole workspace from Settings, Data as a zip of Markdown files with attachments in folders.",
        "export-format-details": "Exported Markdown keeps headings, checklists and tables; tags become front matter and links become relative paths.",
        "import-from-evernote": "Import an ENEX file from Evernote under Settings, Data, Import; notebooks become folders and tags are kept.",
    }),
}
#: (question, page path, anchor of the chunk that answers it)
QUESTIONS = [
    ("how do I set up SAML single sign-on with Okta for my workspace?", 0, "configure-the-identity-provider"),
    ("can admins force everyone to log in through SSO instead of passwords?", 0, "enforce-sso-for-everyone"),
    ("why do I keep getting redirected back to the login page after SSO?", 0, "troubleshooting-login-loops"),
    ("how do I turn on two-factor authentication with an authenticator app?", 1, "turn-on-2fa"),
    ("where do I find my 2FA recovery codes?", 1, "recovery-codes"),
    ("I lost my phone and my recovery codes, how do I get back into my account?", 1, "lost-phone"),
    ("what happens to my bill when I upgrade in the middle of the month?", 2, "upgrade-or-downgrade"),
    ("how can I add a VAT number to my invoices?", 2, "download-invoices"),
    ("what happens to my workspace after I cancel the subscription?", 2, "cancel-subscription"),
    ("why was my card payment declined?", 3, "why-payments-fail"),
    ("when will you retry a failed payment?", 3, "retry-schedule"),
    ("how deep can folders be nested?", 4, "create-nested-folders"),
    ("how do I add the same tag to many notes at once?", 4, "tag-many-notes-at-once"),
    ("can I make a folder that shows all notes with a tag from this week?", 4, "smart-folders"),
    ("how do I share a read only note with someone who has no account?", 5, "create-a-public-link"),
    ("can a shared link stop working after a few days?", 5, "expire-or-revoke-links"),
    ("can I put a password on a public link?", 5, "password-protect"),
    ("do my notes work offline on the phone?", 6, "work-offline"),
    ("what is a conflict copy and how do I get rid of it?", 6, "resolve-conflicts"),
    ("what is the API rate limit and what does a 429 mean?", 7, "rate-limits"),
    ("how do I page through all notes with the REST API cursor?", 7, "pagination"),
    ("how do I verify that a webhook request really came from you?", 8, "verify-signatures"),
    ("what happens when my webhook endpoint is down?", 8, "retries-and-failures"),
    ("how do I export all notes as Markdown files?", 9, "export-a-workspace"),
    ("can I import my notebooks from Evernote?", 9, "import-from-evernote"),
]
DEPTH = 10
_WORD = re.compile(r"[a-z0-9]+")
_STOP = set(["a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "so", "the", "to", "what", "when", "where", "why", "with", "you", "your"])


def chunks() -> list[dict[str, str]]:
    out = []
    for path, (area, title, sections) in PAGES.items():
        for anchor, text in sections.items():
            out.append({"url": f"{BASE}/{path}#{anchor}", "title": title, "area": area,
                        "text": text})
    return out


def _terms(text: str) -> list[str]:
    return [w.rstrip("s") for w in _WORD.findall(text.lower()) if w not in _STOP]


def keyword_scores(qs: list[str], docs: list[dict[str, str]]) -> np.ndarray:
    """BM25 (k1 1.2, b 0.75) of every question against every chunk (title + text)."""
    toks = [_terms(d["title"] + " " + d["text"]) for d in docs]
    avg = sum(map(len, toks)) / len(toks)
    df = Counter(t for ts in toks for t in set(ts))
    out = np.zeros((len(qs), len(docs)))
    for i, q in enumerate(qs):
        for j, ts in enumerate(toks):
            tf = Counter(ts)
            for t in set(_terms(q)):
                if tf[t]:
                    idf = math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5))
                    out[i, j] += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * len(ts) / avg))
    return out


def embedding_scores(qs: list[str], docs: list[dict[str, str]]) -> np.ndarray:
    """Cosine of hashed character-trigram vectors: fuzzy, paraphrase-tolerant matching."""
    def vec(text: str) -> np.ndarray:
        v = np.zeros(2048)
        s = f"  {text.lower()}  "
        for k in range(len(s) - 2):
            v[sum(map(ord, s[k:k + 3])) * 2654435761 % 2048] += 1.0
        return v / (np.linalg.norm(v) or 1.0)

    d = np.stack([vec(x["text"]) for x in docs])
    return np.stack([vec(q) for q in qs]) @ d.T


def main() -> None:
    import polars as pl

    import searcheval_frames as sef

    OUT.mkdir(exist_ok=True)
    docs = chunks()
    urls = [d["url"] for d in docs]
    qs = [q for q, _, _ in QUESTIONS]
    rows = []
    for name, scores in (("keyword", keyword_scores(qs, docs)),
                         ("embedding", embedding_scores(qs, docs))):
        for i, q in enumerate(qs):
            for j in np.argsort(-scores[i], kind="stable")[:DEPTH]:
                rows.append({"system": name, "question": q, "url": urls[j],
                             "similarity": round(float(scores[i, j]), 6)})
    runs = pl.DataFrame(rows)
    canon = {v: k for k, v in COLUMNS.items() if k != "relevance"}
    hybrid = pl.DataFrame(sef.fuse(runs.rename(canon), method="rrf", name="hybrid"))
    hybrid = (hybrid.sort(["query_id", "score"], descending=[False, True])
              .group_by("query_id", maintain_order=True).head(DEPTH)
              .select(pl.lit("hybrid").alias("system"), pl.col("query_id").alias("question"),
                      pl.col("doc_id").alias("url"),
                      pl.col("score").round(6).alias("similarity")))
    runs = pl.concat([runs, hybrid])
    pages = list(PAGES)
    grades = []
    for q, page, anchor in QUESTIONS:
        area = PAGES[pages[page]][0]
        for url in runs.filter(pl.col("question") == q).get_column("url").unique().sort():
            path, _, sec = url[len(BASE) + 1:].partition("#")
            grade = (3 if path == pages[page] and sec == anchor else 2 if path == pages[page]
                     else 1 if PAGES[path][0] == area else 0)
            grades.append({"question": q, "url": url, "grade": grade})
        target = f"{BASE}/{pages[page]}#{anchor}"  # the answer is graded even when missed
        if not any(g["url"] == target and g["question"] == q for g in grades):
            grades.append({"question": q, "url": target, "grade": 3})
    with open(OUT / "chunks.jsonl", "w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps({"url": d["url"], "title": d["title"], "text": d["text"]}) + "\n")
    with open(OUT / "questions.tsv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(["question", "area"])
        for q, page, _ in QUESTIONS:
            w.writerow([q, PAGES[pages[page]][0]])
    pl.DataFrame(grades).write_csv(OUT / "grades.csv")
    runs.write_csv(OUT / "runs.csv")
    print(f"wrote {OUT}: {len(docs)} chunks, {len(qs)} questions, {len(grades)} grades, "
          f"{runs.height} run rows")


if __name__ == "__main__":
    main()
