"""How `vouch forget --purge-history` reads to a person: the plan (what holds the
bytes, what blocks, who else keeps them, the confirmation to type) or what the purge did."""

from __future__ import annotations

from typing import Any

from vouch.cli.oneline import escaped


def forget(d: dict[str, Any]) -> str:
    return escaped_lines(_purged(d) if d.get("mode") == "purged" else _plan(d))


def escaped_lines(lines: list[str]) -> str:
    return "\n".join(escaped(line) for line in lines) + "\n"


def _plan(d: dict[str, Any]) -> list[str]:
    ids = " ".join(d["ids"])
    lines = [
        f"forget {ids}: plan (nothing has been changed)",
        f"  files in history: {len(d['paths'])} path(s), {d['blobs']} version(s), in "
        f"{d['commits_holding']} commit(s); {d['commits_rewritten']} commit(s) would get new ids",
    ]
    lines += [f"    {p}" for p in d["paths"][:20]]
    if d.get("interrupted"):
        lines.append("  an interrupted purge is recorded: confirming finishes it")
    lines.append("  refs that reach the bytes (rewritten here):")
    for group, refs in d["refs"].items():
        lines.append(f"    {group}: {', '.join(refs[:10])}" + (" ..." if len(refs) > 10 else ""))
    if not d["refs"]:
        lines.append(
            "    none" + (" (the object store still holds them: gc)" if d["still_stored"] else "")
        )
    lines.append(f"  reflogs: {d['reflogs']}")
    if d["remotes"]:
        lines.append("  remotes (they keep the bytes until you run this there):")
        for r in d["remotes"]:
            lines.append(f"    {r['name']} ({r['url']}): holds {r['holds']} — {r['why']}")
            lines += [f"      {step}" for step in r["run"]]
    else:
        lines.append("  remotes: none configured (other clones you made keep their copy)")
    lines.append("  what --confirm runs:")
    lines += [f"    {c}" for c in d["commands"]]
    lines.append("  limits:")
    lines += [f"    - {x}" for x in d["limits"]]
    if d["blockers"]:
        lines.append("  refused until:")
        lines += [f"    - {b['message']}: {b['hint']}" for b in d["blockers"]]
    else:
        lines.append(
            f"  to purge: vouch forget {ids} --purge-history"
            + "".join(" --token ..." for _ in range(d["tokens"]))
            + f" --confirm {d['confirm']}"
        )
    return lines


def _purged(d: dict[str, Any]) -> list[str]:
    head = d.get("head") or {}
    lines = [
        f"forgot {' '.join(d['purged'])}: {d['commits_rewritten']} commit(s) rewritten, "
        f"{len(d['refs_moved'])} ref(s) moved; audit event in {str(d['event'])[:12]}",
        f"  HEAD {str(head.get('old'))[:12]} -> {str(head.get('new'))[:12]}",
        f"  left in this clone: {d['bytes_left_here']} blob(s), "
        f"{d['token_objects_left_here']} object(s) holding a token",
        f"  cleared: {', '.join(d['cleared']) or 'nothing to clear'}; the index was rebuilt",
    ]
    for r in d["remotes"]:
        lines.append(f"  {r['name']} ({r['url']}) still holds them ({r['holds']}): run")
        lines += [f"    {step}" for step in r["run"]]
    lines.append("  other clones and forks keep their copy: re-clone them")
    return lines
