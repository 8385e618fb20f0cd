"""The read side: a question -> selected context -> a cited answer.

``search`` ranks stored chunks (BM25, with an optional embedding fusion); ``select`` is the deterministic
pre-retrieval selector (wiki first, then sources, the open page, dataset rows); ``questions`` reads what a
question asks for and ``parsing`` the people and subjects a passage names; ``ranker`` is the answer ranker
model; ``answer`` answers from the selection, with citations, verdicts and refusals. The models these steps
use are built at the edge and handed in (``llmwiki.services``).
"""
