"""A ContextPack as markdown (`vouch context TASK`, `--format markdown` or `human`).

Meant to be pasted into a prompt as it is: one block per item, most relevant first, each
naming its id (what an agent cites), kind, status and citations; page sections are
quoted so that their own headings cannot break the pack's structure. With no item, the
best source passages follow under a heading that marks them unreviewed, quoted the same
way, with the one line on making them reviewed knowledge.
"""

from __future__ import annotations

from typing import Any

from vouch.cli.oneline import escaped


def markdown(pack: dict[str, Any]) -> str:
    lines = [f"# Context: {_one_line(pack['task'])}", ""]
    items = pack.get("items") or []
    across = pack.get("bases") is not None
    for base in pack.get("bases") or ():  # across knowledge bases: what was not searched
        if base.get("state") != "fresh":
            why = _one_line(base.get("detail") or "")
            lines += [f"_{_one_line(base['name'])}: {base['state']} ({why})_", ""]
    if not items:
        where = "the registered knowledge bases" if across else "this repository's knowledge base"
        lines.append(f"No approved knowledge in {where} matches this task.")
        lines += _unreviewed(pack)
        return "\n".join(lines)
    where = (
        "the registered vouch knowledge bases"
        if across
        else "this repository's vouch knowledge base"
    )
    lines += [f"Approved knowledge from {where}, most relevant first. Cite items by id.", ""]
    for n, item in enumerate(items, 1):
        lines += [_heading(n, item), ""]
        if item["kind"] == "page":
            lines += [f"> {line}".rstrip() for line in item["text"].split("\n")]
        else:
            lines.append(item["text"])
        if item.get("partial"):
            lines[-1] += " [cut to fit]"
        if item.get("drifted"):
            where = ", ".join(
                escaped(f"{d['path']}:{d['locator']}" if d["locator"] else d["path"])
                for d in item["drifted"]
            )
            lines += [
                "",
                f"_The lines it cites changed since it was approved ({where}): check them._",
            ]
        cites = [_citation(c) for c in item.get("citations") or []]
        if cites:
            lines += ["", "Cites: " + "; ".join(cites)]
        lines.append("")
    note = (
        f"{len(items)} item{'' if len(items) == 1 else 's'}, {pack['total_chars']} of "
        f"{pack['max_chars']} characters"
    )
    if pack.get("truncated"):
        note += "; more matched but did not fit (raise --max-chars)"
    lines.append(f"_{note}._")
    return "\n".join(lines)


def _unreviewed(pack: dict[str, Any]) -> list[str]:
    """The best source passages, under a heading that says they are not knowledge, each
    quoted after its citation; then the one line on making them reviewed knowledge."""
    found = pack.get("unreviewed") or []
    if not found:
        return ["", f"_{escaped(pack['next_step'])}_"] if pack.get("next_step") else []
    lines = ["", "## Unreviewed source passages (not reviewed knowledge)", ""]
    for n, p in enumerate(found, 1):
        where = escaped(str(p.get("cite_path") or p["cite"]))
        section = f" § {_one_line(p['section'])}" if p.get("section") else ""
        lines += [f"### {n}. `{where}`{section} (source `{str(p['id'])[:12]}`, unreviewed)", ""]
        lines += [f"> {line}".rstrip() for line in str(p["text"]).split("\n")]
        lines.append("")
    if pack.get("next_step"):
        lines.append(f"_{escaped(pack['next_step'])}_")
    return lines


def _heading(n: int, item: dict[str, Any]) -> str:
    what = [item["type"] if item.get("type") else "", item.get("status") or ""]
    detail = ", ".join(w for w in what if w)
    title = ""
    if item["kind"] in ("page", "entity"):
        title = f" {_one_line(item['title'])}"
        if item.get("section"):
            title += f" § {_one_line(item['section'])}"
    if item.get("kb"):  # a pack across knowledge bases: whose item it is
        detail = ", ".join(x for x in (detail, f"from {_one_line(item['kb'])}") if x)
    return f"## {n}. {item['kind']}{title} `{item['id']}`" + (f" ({detail})" if detail else "")


def _citation(c: dict[str, Any]) -> str:
    if c["kind"] == "claim":
        return f"claim `{c['id']}`"
    quote = f' "{_one_line(c["quote"])}"' if c.get("quote") else ""
    # a source's sha256 is shortened as git does
    shown = c["id"][:12] if c["kind"] == "source" else c["id"]
    if c.get("cite_path"):  # by its repository path (and lines), as search and why cite
        path = str(c["cite_path"])
        title = _one_line(c.get("title"))
        file = path.rpartition(":")[0] if c["kind"] == "evidence" else path
        named = f"{title} " if title and title not in (file, file.rsplit("/", 1)[-1]) else ""
        return f"{named}`{escaped(path)}`{quote} (`{shown}`)"
    # a source with no path (stdin, inline text): by its title (and lines)
    where = f" {escaped(str(c['locator']))}" if c.get("locator") and c["kind"] == "evidence" else ""
    return f"{_one_line(c.get('title') or c['id'])}{where}{quote} (`{shown}`)"


def _one_line(text: object) -> str:
    return " ".join(str(text or "").split())
