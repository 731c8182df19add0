"""Setting `schema_version` in a config.yaml's text, every other byte kept.

The file is the user's, with their comments: the one line is rewritten (or added after
the opening comments), and the result is read back — the version it declares must be the
new one and every other setting unchanged — or the edit is refused, naming the file.
"""

from __future__ import annotations

import re

from vouch.core.config import CONFIG_NAME, parse
from vouch.errors import CorruptFile, SettingsInvalid
from vouch.store import schema

_LINE = re.compile(rf"^{schema.KEY}[ \t]*:.*$", re.MULTILINE)
_COMMENT = "# The format the knowledge files follow (`vouch migrate`).\n"


def with_version(text: str, version: int, where: str = CONFIG_NAME) -> str:
    line = f"{schema.KEY}: {version}"
    found = _LINE.findall(text)
    if len(found) == 1:
        out = _LINE.sub(line, text, count=1)
    elif not found:
        lines = text.splitlines(keepends=True)
        head = 0
        while head < len(lines) and lines[head].lstrip().startswith("#"):
            head += 1
        if lines[:head] and not lines[head - 1].endswith("\n"):
            lines[head - 1] += "\n"
        block = f"{_COMMENT}{line}\n" + ("\n" if head < len(lines) else "")
        out = "".join(lines[:head]) + ("\n" if head else "") + block + "".join(lines[head:])
    else:
        out = ""
    before = parse(text, where=where) if text.strip() else {}
    try:
        after = parse(out, where=where) if out else {}
    except CorruptFile:
        after = {}
    before.pop(schema.KEY, None)
    if not out or after.pop(schema.KEY, None) != version or after != before:
        raise SettingsInvalid(
            f"{where}: vouch cannot set {schema.KEY} to {version} without changing other "
            "settings (the key is written in a way this edit does not follow)",
            hint=f"write `{line}` on its own line at the top of {where}, commit, and run "
            "`vouch migrate apply` again",
        )
    return out
