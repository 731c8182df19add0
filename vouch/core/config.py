"""Settings from `.vouch/config.yaml`, merged over the defaults shipped in the template.

Every command reads the configuration, so it goes through `vouch.fastyaml`, which
reads the plain block mappings a configuration file usually is without PyYAML (whose
import costs ~10 ms of a cold command) and gives anything else to PyYAML.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vouch.core import fastyaml
from vouch.errors import CorruptFile, SettingsInvalid, UsageError

CONFIG_NAME = "config.yaml"
_TEMPLATES = Path(__file__).parent.parent / "templates"


def template_text(name: str) -> str:
    return (_TEMPLATES / name).read_text(encoding="utf-8")


def parse(text: str, where: str) -> dict[str, Any]:
    """The mapping in a YAML configuration file (CorruptFile when it is not YAML)."""
    return fastyaml.load(text, where=where)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


MAX_NUMBER = 2**53  # a setting past this is a typo, and past an int's or a date's range

_REVIEW_FLAGS = (
    "require_citations",
    "allow_self_approval",
    "require_signed_decisions",
    "agent_lifecycle",
)
_REVIEW_ROLES = ("human", "trusted-agent")


def review_problem(review: Any) -> str:
    """Why a `review` section cannot be obeyed as written ("" when it can): a quoted
    'true', or approvers given as one string, would otherwise read as the default."""
    if not isinstance(review, dict):
        return f"review must be a mapping, not {review!r}"
    for key in _REVIEW_FLAGS:
        if key in review and not isinstance(review[key], bool):
            return f"review.{key} must be true or false, not {review[key]!r}"
    approvers = review.get("approvers")
    if approvers is not None and (
        not isinstance(approvers, list) or not all(isinstance(a, str) for a in approvers)
    ):
        return f"review.approvers must be a list of names or e-mails, not {approvers!r}"
    if review.get("approver_role", "human") not in _REVIEW_ROLES:
        role = review.get("approver_role")
        return f"review.approver_role must be one of {', '.join(_REVIEW_ROLES)}, not {role!r}"
    signers = review.get("allowed_signers", "")
    if signers is not None and not isinstance(signers, str):
        return f"review.allowed_signers must be a path, not {signers!r}"
    return ""


@dataclass(frozen=True)
class Config:
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, vouch_dir: Path) -> Config:
        path = vouch_dir / CONFIG_NAME
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls.from_text(None, str(path))
        except OSError as exc:
            raise CorruptFile(f"cannot read {path}: {exc}") from exc
        return cls.from_text(text, str(path))

    @classmethod
    def from_text(cls, text: str | None, where: str, *, gate: bool = False) -> Config:
        """The settings a configuration file's text gives (None: the defaults), e.g. the
        one committed on a branch, which is what the gate obeys. `gate`: the review
        section must be obeyable as written (`review_problem`), or CorruptFile — the
        gate's own settings fail closed, never fall back to a default."""
        defaults = parse(template_text(CONFIG_NAME), where="default config")
        if text is None:
            return cls(defaults)
        merged = _merge(defaults, parse(text, where=where))
        problem = review_problem(merged.get("review")) if gate else ""
        if problem:
            raise SettingsInvalid(
                f"{where}: {problem}; the review gate will not guess what it means",
                hint="fix .vouch/config.yaml (see the comments the template ships) and commit it",
            )
        return cls(merged)

    def number(self, dotted: str, default: float) -> float:
        """A non-negative number setting; a wrong value is the user's error, named."""
        value = self.get(dotted, default)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0 or value > MAX_NUMBER:
            raise UsageError(
                f"{CONFIG_NAME}: {dotted} must be a number from 0 to {MAX_NUMBER}, not {value!r}"
            )
        return float(value)

    def typed(self, dotted: str, default: float, kind: type[int] | type[float]) -> Any:
        """A numeric setting as `kind`; E100 naming the key when it is not a number."""
        raw = self.get(dotted, default)
        try:
            value = kind(default if raw is None else raw)
            if not math.isfinite(value) or abs(value) > MAX_NUMBER:
                raise ValueError(f"{value!r} is out of range")
            return value
        except (TypeError, ValueError, OverflowError) as exc:
            raise UsageError(
                f"{dotted} in {CONFIG_NAME} must be a number", hint=f"the default is {default}"
            ) from exc

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node
