"""The review gate is git: proposals are branches, approval merges, rejection closes.

- `propose`  — validate and open `vouch/proposal/<id>` (one commit, plumbing only)
- `pending`  — open proposals and one proposal with its diff
- `decide`   — approve (merge commit) and reject (decision record, kept commit)
- `vouch.store.landing` / `vouch.store.recovery` — the atomic ref transaction and the
  work tree; the write lock and finishing what a killed process left
- `records`  — trailers, proposal lookup, decision files
- `handlers` — the kb.* methods over all of the above
"""
