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
from vouch.errors import CorruptFile, UsageError

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
    def from_text(cls, text: str | None, where: str) -> Config:
        """The settings a configuration file's text gives (None: the defaults), e.g. the
        one committed on a branch, which is what the gate obeys."""
        defaults = parse(template_text(CONFIG_NAME), where="default config")
        return cls(defaults if text is None else _merge(defaults, parse(text, where=where)))

    def number(self, dotted: str, default: float) -> float:
        """A non-negative number setting; a wrong value is the user's error, named."""
        value = self.get(dotted, default)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0:
            raise UsageError(
                f"{CONFIG_NAME}: {dotted} must be a non-negative number, not {value!r}"
            )
        return float(value)

    def typed(self, dotted: str, default: float, kind: type[int] | type[float]) -> Any:
        """A numeric setting as `kind`; E100 naming the key when it is not a number."""
        raw = self.get(dotted, default)
        try:
            return kind(default if raw is None else raw)
        except (TypeError, ValueError) as exc:
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
