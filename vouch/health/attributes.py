"""No git attribute rewrites the knowledge files between the repository and the disk.

vouch hashes what is on disk: a `.gitattributes` anywhere in the repository that turns
on line-ending conversion (`text`, `eol`), a filter, `ident` or a working-tree encoding
for `.vouch/` paths makes every clone check out bytes no id, seal or source hash matches
— a one-line pull request outside `.vouch/` that breaks `doctor` and `source verify` in
every clone for good (the third outsider). `vouch init` writes `.vouch/.gitattributes`
turning them all off (the deeper file wins over the root's); `doctor` and `lint --since`
report any tracked knowledge file that still gets one, with the line that fixes it.
"""

from __future__ import annotations

from vouch.health.issues import Issue, error
from vouch.store.initkb import NO_CONVERSION
from vouch.store.kb import KB

CONVERTING = ("text", "eol", "filter", "ident", "working-tree-encoding")


def converted(kb: KB) -> list[Issue]:
    found = kb.repo.attributes(kb.rel("."), CONVERTING)
    bad = {
        path: {k: v for k, v in attrs.items() if v != "unset"}
        for path, attrs in found.items()
        if any(v != "unset" for v in attrs.values())
    }
    if not bad:
        return []
    first = sorted(bad)[0]
    said = ", ".join(f"{k}={v}" if v != "set" else k for k, v in sorted(bad[first].items()))
    more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
    return [
        error(
            "git-attributes",
            f"{first}{more} is checked out through git attributes ({said}) that rewrite "
            "its bytes, so ids, seals and source hashes stop matching in every clone: "
            f"put `{NO_CONVERSION.strip()}` first in {kb.rel('.gitattributes')} and remove "
            "the attribute from the .gitattributes that sets it",
            path=first,
        )
    ]
