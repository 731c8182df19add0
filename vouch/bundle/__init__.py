"""Bundles: the approved knowledge of a branch as one portable file, checked before it
is trusted, imported as one audited commit (issue 13).

A bundle is a gzip'd tar. `manifest.json` comes first — format and version, when and
from which commit it was made, by which vouch, the digest of its file list, and every
other member's path, sha256 and size — then the knowledge files of the exported commit,
each under its `.vouch/`-relative path, in path order.

- `layout`: what a bundle may hold, by path, and which names are never taken;
- `archive`: writing a bundle (`export`) and reading one back (`check`, `load`);
- `content`: what each knowledge file must be (checked as approve checks content);
- `integrity`: what lint would find broken on the branch once an import landed
  (references to nothing, knowledge without an approved decision);
- `importing`: what an import would do here (`plan`) and doing it (`import_apply`).

What it holds: sources, evidence, claims, entities, relations, pages, sessions, decision
records and the audit log, as committed on the checked-out branch — read from git, not
the work tree, so uncommitted edits and pending proposals stay out. Never the
configuration: `config.yaml` is this repository's policy (who may approve, whether
decisions must be signed, which agent acts), which the gate reads from the committed
branch, and a file from elsewhere must not rewrite it. Never the derived index, locks or
the `.gitignore`/`.gitattributes` that `vouch init` makes.

A bundle is untrusted input (DESIGN §4.1), like a proposal branch: nothing in it is
written anywhere before the whole of it passed the check. Importing is a person's
decision, like approve. The bundle's own audit events are not merged into this
repository's chain: that chain records what happened here, and the import event records
what came in (the bundle's sha256, who imported it, what it brought).
"""

from vouch.bundle.archive import FORMAT, VERSION, Bundle, check, content_digest, export, load
from vouch.bundle.content import knowledge_problems
from vouch.bundle.importing import ON_CONFLICT, Plan, import_apply, import_check, plan
from vouch.bundle.layout import MANIFEST, committed_files, name_problem

__all__ = [
    "FORMAT",
    "MANIFEST",
    "ON_CONFLICT",
    "VERSION",
    "Bundle",
    "Plan",
    "check",
    "committed_files",
    "content_digest",
    "export",
    "import_apply",
    "import_check",
    "knowledge_problems",
    "load",
    "name_problem",
    "plan",
]
