"""Settings from `.vouch/config.yaml`, merged over the defaults shipped in the template."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from vouch import yamlio
from vouch.errors import CorruptFile

CONFIG_NAME = "config.yaml"


def template_text(name: str) -> str:
    return resources.files("vouch").joinpath("templates", name).read_text(encoding="utf-8")


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
        defaults = yamlio.load_yaml(template_text(CONFIG_NAME), where="default config")
        path = vouch_dir / CONFIG_NAME
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(defaults)
        except OSError as exc:
            raise CorruptFile(f"cannot read {path}: {exc}") from exc
        return cls(_merge(defaults, yamlio.load_yaml(text, where=str(path))))

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node
