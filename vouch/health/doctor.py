"""`kb.doctor`: everything that can be wrong with a knowledge base, in one report.

Five checks, each a section with its own summary, and one list of issues (each naming
the `check` it came from) with a verdict — ok, warnings or errors:

- lint: every knowledge file git tracks, its links and its provenance
  (`lint.everything`); a file under `.vouch/` git does not track is not knowledge, and
  is named as such (`untracked`);
- sources: every source's bytes against its id (`verify`);
- index: the derived index's state (a cache: missing or stale is normal, a collision
  or a stale index that may not refresh itself is an error);
- audit: the audit chain against the anchors git history recorded;
- config: keys of `.vouch/config.yaml` the template does not know (a typo is silently
  ignored otherwise), values of the wrong type, and review settings edited but not
  committed (the gate obeys the committed ones), and a schema version behind this
  vouch's (`vouch migrate plan`) or newer (writes refused);
- agents: agent hosts configured with `vouch install-agent` whose server command is
  gone (`agent_hosts`);
- local: what a killed or attacked write left (`leftovers`): a refused journal, stale
  git lock files, an approval whose object the branch lacks.
"""

from __future__ import annotations

import difflib
from typing import Any

from vouch.core.config import CONFIG_NAME, Config, parse, template_text
from vouch.core.progress import Progress
from vouch.errors import CorruptFile, VouchError
from vouch.health import (
    agent_hosts,
    attributes,
    host_grants,
    leftovers,
    lint,
    redactions,
    schema_version,
    untracked,
    verify,
)
from vouch.health.issues import Issue, counts, error, ordered, verdict, warn
from vouch.store.kb import KB

# keys the code reads that the template leaves out on purpose (tuning for experts)
_EXTRA_KEYS = ("search.freshness_seconds", "search.similarity_floor")
_ENUMS = {"review.approver_role": ("human", "trusted-agent"), "index.lexical": ("fts5", "whoosh")}


def doctor(kb: KB, progress: Progress | None = None) -> dict[str, Any]:
    issues: list[Issue] = []
    checks: dict[str, Any] = {}

    tracked, strays = untracked.split(kb)  # what git tracks is judged; strays are named
    k, found = lint.everything(kb, progress=progress, view=tracked)
    linted = lint.report("full", k, [*found, *untracked.issues(kb, strays)])
    checks["lint"] = {
        "verdict": linted["verdict"],
        "errors": linted["errors"],
        "warnings": linted["warnings"],
        **linted["checked"],
    }
    issues += [{**i, "check": "lint"} for i in linted["issues"]]

    sources = verify.verify_sources(kb)
    checks["sources"] = {
        "ok": sources["ok"],
        "checked": sources["checked"],
        "issues": len(sources["issues"]),
    }
    issues += [
        {**error(i["kind"], i["detail"], id=i["id"], path=i["path"]), "check": "sources"}
        for i in sources["issues"]
    ]

    index_check, index_issues = _index(kb)
    checks["index"] = index_check
    issues += [{**i, "check": "index"} for i in index_issues]

    audit_check, audit_issues = _audit(kb)
    audit_issues += redactions.issues(kb)  # an approved redaction undone by hand
    checks["audit"] = audit_check
    issues += [{**i, "check": "audit"} for i in audit_issues]

    config_issues = config_drift(kb) + _gate(kb) + attributes.converted(kb)
    config_issues += schema_version.issues(kb)  # behind: `vouch migrate plan`
    checks["config"] = {"verdict": verdict(config_issues), **counts(config_issues)}
    issues += [{**i, "check": "config"} for i in config_issues]

    agent_issues, agent_hosts_found = agent_hosts.check(kb)  # install-agent's entries
    agent_issues += host_grants.committed(kb)  # a committed entry letting agents decide
    checks["agents"] = {"verdict": verdict(agent_issues), "hosts": agent_hosts_found}
    issues += [{**i, "check": "agents"} for i in agent_issues]

    local_issues = leftovers.issues(kb)  # crash and attack leftovers in .git/vouch/
    checks["local"] = {"verdict": verdict(local_issues), **counts(local_issues)}
    issues += [{**i, "check": "local"} for i in local_issues]

    found_all = ordered(issues)
    return {
        "ok": verdict(found_all) != "errors",
        "verdict": verdict(found_all),
        **counts(found_all),
        "checks": checks,
        "issues": found_all,
    }


def _gate(kb: KB) -> list[Issue]:
    """The review settings committed on the checked-out branch: unreadable (an error —
    the gate refuses to decide under them), self-approval on, signers to trust."""
    from vouch.gate.committed import settings_at
    from vouch.gate.deciders import ALLOW_SELF, self_approval_note
    from vouch.health import signers_file

    tip = kb.repo.peek("HEAD")
    if not tip:
        return []
    try:
        settings = settings_at(kb, tip)
    except CorruptFile as exc:
        return [error("config-invalid", f"the committed review settings: {exc.message}")]
    note = self_approval_note(settings)
    found = [warn("self-approval-allowed", note, id=ALLOW_SELF)] if note else []
    return found + signers_file.issues(kb, settings)


def _index(kb: KB) -> tuple[dict[str, Any], list[Issue]]:
    from vouch.index.status import index_status

    try:
        status = index_status(kb)
    except VouchError as exc:
        # the configuration itself is unusable (a model that is no model): search fails
        # too, so it is an error; a system failure reading the index is a warning
        said = error if exc.exit_code == 1 else warn
        return {"state": "unknown", "reason": exc.message}, [
            said("index", f"the index's state cannot be read: {exc.message}")
        ]
    state, reason = status["state"], status.get("reason")
    summary = {"state": state, "reason": reason, "path": status.get("path")}
    if state in ("missing", "stale") and status.get("auto_refresh", True):
        # normal for a cache, but a person reading "stale" beside "ok" asks what to do
        summary["next"] = (
            f"the next search {'builds' if state == 'missing' else 'refreshes'} it; "
            "`vouch index rebuild` does it now"
        )
    hint = "; `vouch index rebuild` builds it again"
    if state == "collision":
        return summary, [
            error("index", f"the index belongs to another knowledge base: {reason}{hint} (--force)")
        ]
    if state == "corrupt":
        return summary, [
            warn("index", f"the index is damaged ({reason}); the next search rebuilds it{hint}")
        ]
    if state == "stale" and not status.get("auto_refresh", True):
        return summary, [
            error(
                "index",
                f"the index is stale ({reason}) and "
                f"index.auto_refresh is false, so search refuses it{hint}",
            )
        ]
    return summary, []


def _audit(kb: KB) -> tuple[dict[str, Any], list[Issue]]:
    from vouch.gate.provenance import verify as verify_audit
    from vouch.health.provenance import head_proposal

    try:
        report = verify_audit(kb)
    except VouchError as exc:
        return {"ok": False}, [error("audit", f"the audit log cannot be checked: {exc.message}")]
    pending = head_proposal(kb)
    if pending is not None:  # its own branch checked out for review: pending, not merged
        merged = [
            m for m in report.get("merged_without_decision") or [] if m["proposal_id"] != pending[0]
        ]
        report["issues"] = [
            i for i in report["issues"] if f"proposal {pending[0]} " not in str(i.get("detail"))
        ]
        report["merged_without_decision"] = merged
        report["ok"] = not report["issues"]
    found = []
    for item in report["issues"]:
        where = kb.rel(item["file"]) if item.get("file") else None
        line = f" (line {item['line']})" if item.get("line") else ""
        found.append(error("audit", f"{item['detail']}{line}", path=where))
    return {
        "ok": report["ok"],
        "events": report.get("events"),
        "files": report.get("files"),
        "merged_without_decision": len(report.get("merged_without_decision") or []),
    }, found


# -- configuration -----------------------------------------------------------------------------
def _flatten(data: dict[str, Any], stem: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{stem}{key}"
        if isinstance(value, dict) and value:
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def known_keys() -> dict[str, Any]:
    """Every configuration key vouch reads, with its default (None: no default)."""
    from vouch.search.ranking import Tuning

    known = _flatten(parse(template_text(CONFIG_NAME), where="default config"))
    for name in Tuning._fields:
        known.setdefault(f"search.{name}", None)
    for key in _EXTRA_KEYS:
        known.setdefault(key, None)
    known.update(_prior_keys())
    return known


def _prior_keys() -> dict[str, Any]:
    """`search.prior.<kind>` and `search.prior.<kind>.<status>` (vouch/search/prior.py)."""
    import importlib

    from vouch.search.prior import DEFAULT_BOOSTS
    from vouch.search.request import SEARCH_KINDS

    out: dict[str, Any] = {}
    for kind in SEARCH_KINDS:
        out[f"search.prior.{kind}"] = DEFAULT_BOOSTS.get(kind, 0.0)
        for status in getattr(importlib.import_module(f"vouch.kinds.{kind}"), "STATUSES", ()):
            out[f"search.prior.{kind}.{status}"] = DEFAULT_BOOSTS.get(f"{kind}.{status}", 0.0)
    return out


def config_drift(kb: KB) -> list[Issue]:
    """Unknown and invalid keys in the work tree's config.yaml, and review settings that
    differ from the committed ones."""
    path = kb.dir / CONFIG_NAME
    where = kb.rel(CONFIG_NAME)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [warn("config-missing", f"{where} is missing; vouch uses the defaults", path=where)]
    except (OSError, UnicodeDecodeError) as exc:
        return [error("config-invalid", f"cannot read {where}: {exc}", path=where)]
    try:
        data = parse(text, where=where)
    except CorruptFile as exc:
        return [error("config-invalid", exc.message, path=where)]
    known = known_keys()
    sections = {k.split(".", 1)[0] for k in known if "." in k}
    out: list[Issue] = []
    for key, value in _flatten(data).items():
        if key not in known:
            if isinstance(value, dict) and key in sections:
                continue  # an empty section
            close = difflib.get_close_matches(key, list(known), n=1)
            out.append(
                warn(
                    "config-unknown",
                    f"{key} is not a setting vouch knows, so it "
                    "has no effect" + (f" (did you mean {close[0]}?)" if close else ""),
                    id=key,
                    path=where,
                )
            )
            continue
        problem = _value_problem(key, value, known[key])
        if problem:
            out.append(error("config-invalid", f"{key}: {problem}", id=key, path=where))
    out += _uncommitted(kb, data, where)
    return out


def _value_problem(key: str, value: Any, default: Any) -> str | None:
    if key in _ENUMS and value not in _ENUMS[key]:
        return f"{value!r} is not one of: {', '.join(_ENUMS[key])}"
    if default is None or value is None:
        if (
            value is not None
            and key.startswith("search.")
            and (isinstance(value, bool) or not isinstance(value, int | float))
        ):
            return f"must be a number, not {value!r}"
        return None
    if isinstance(default, bool):
        return None if isinstance(value, bool) else f"must be true or false, not {value!r}"
    if isinstance(default, int | float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"must be a number, not {value!r}"
        return "must not be negative" if value < 0 else None
    if isinstance(default, str):
        return None if isinstance(value, str) else f"must be text, not {value!r}"
    if isinstance(default, list) and (
        not isinstance(value, list) or not all(isinstance(v, str) for v in value)
    ):
        return f"must be a list of names, not {value!r}"
    return None


def _uncommitted(kb: KB, data: dict[str, Any], where: str) -> list[Issue]:
    head = kb.repo.peek("HEAD")
    blob = kb.repo.blob_at(head, where) if head else None
    if blob is None:
        return []
    try:
        committed = Config.from_text(kb.repo.read_blob(blob).decode("utf-8", "replace"), where).get(
            "review"
        )
    except CorruptFile:
        return []
    review = data.get("review")
    mine: dict[str, Any] = review if isinstance(review, dict) else {}
    defaults: dict[str, Any] = Config.from_text(None, where).get("review") or {}
    if {**defaults, **mine} != committed:
        return [
            warn(
                "config-uncommitted",
                "review settings in the work tree differ from "
                "the committed ones; the review gate obeys the committed configuration, "
                "so commit them to take effect",
                id="review",
                path=where,
            )
        ]
    return []
