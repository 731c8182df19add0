"""Search over the derived index: hybrid retrieval, the response contract, and its eval.

`vouch.search.engine.search` is the one search function; `kb.search` (every transport)
and `vouch search` are thin adapters over it. The modules here never touch SQLite or
hnswlib themselves — they call the query primitives of `vouch.index`.
"""
