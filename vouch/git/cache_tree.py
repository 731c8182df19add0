"""The index's cache-tree extension (TREE): the directories above changed paths marked
invalid, everything else copied as it was (git rebuilds invalid nodes on its next
command). Used by `index_file` when it patches a few entries in place."""

from __future__ import annotations

from collections.abc import Iterable


def invalidate(body: bytes, paths: Iterable[str], width: int = 20) -> bytes:
    """The cache-tree with every directory above a changed path marked invalid.

    Nodes are stored depth-first; parsing stops as soon as every such directory has been
    rewritten or shown absent (its parent's children are all read), and the rest of the
    extension is copied unchanged — so `sources/` (one directory per source) is usually
    never parsed.
    """
    wanted = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        wanted.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    remaining = set(wanted)
    out = bytearray()
    pos = 0
    stack: list[tuple[str, int]] = []  # (directory, children still to read)
    while pos < len(body) and remaining:
        nul = body.index(b"\0", pos)
        name = body[pos:nul].decode("utf-8", "surrogateescape")
        line_end = body.index(b"\n", nul)
        count_s, subtrees_s = body[nul + 1 : line_end].split(b" ")
        subtrees = int(subtrees_s)
        pos = line_end + 1
        parent = stack[-1][0] if stack else None
        full = name if parent in (None, "") else f"{parent}/{name}"
        if parent is not None:
            # siblings are stored by (length, name): a wanted sibling that sorts before
            # this one and has not appeared does not exist
            key = _tree_key(name)
            for gone in [
                d for d in remaining if d and _parent(d) == parent and _tree_key(_base(d)) < key
            ]:
                _drop(remaining, gone)
        sha = b""
        if int(count_s) >= 0:
            sha = body[pos : pos + width]
            pos += width
        if full in wanted:
            remaining.discard(full)
            out += name.encode("utf-8", "surrogateescape") + b"\0-1 " + subtrees_s + b"\n"
        else:
            out += name.encode("utf-8", "surrogateescape") + b"\0" + count_s + b" "
            out += subtrees_s + b"\n" + sha
        if stack:
            stack[-1] = (stack[-1][0], stack[-1][1] - 1)
        stack.append((full, subtrees))
        while stack and stack[-1][1] == 0:  # a directory whose children are all read
            done = stack.pop()[0]
            for gone in [d for d in remaining if d and _parent(d) == done]:
                _drop(remaining, gone)
    out += body[pos:]
    return bytes(out)


def _drop(remaining: set[str], directory: str) -> None:
    """`directory` is not in the cache-tree, so neither is anything below it."""
    remaining.difference_update(
        {d for d in remaining if d == directory or d.startswith(directory + "/")}
    )


def _tree_key(name: str) -> tuple[int, bytes]:
    raw = name.encode("utf-8", "surrogateescape")
    return len(raw), raw


def _base(directory: str) -> str:
    return directory.rsplit("/", 1)[-1]


def _parent(directory: str) -> str:
    return directory.rsplit("/", 1)[0] if "/" in directory else ""
