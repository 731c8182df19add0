"""`vouch forget ID --purge-history`: a person's deliberate rewrite of history, so that
an object's bytes (and, with `--token`, a literal string) survive in no commit, ref,
reflog or object of this clone — planned first (`plan`), done with a typed confirmation
(`run`), with the words scrubbed from commit messages (`messages`)."""
