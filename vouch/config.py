"""Settings from `.vouch/config.yaml`, merged over the defaults shipped in the template.

Every command reads the configuration, so the plain block mappings a configuration
file usually is (`key: scalar` and nested `key:` sections, comments) are read here
without PyYAML, whose import costs ~10 ms of a cold command; anything else (lists,
flow collections, anchors, trailing comments, unusual scalars) goes to PyYAML.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vouch import yamlio
from vouch.errors import CorruptFile, UsageError

CONFIG_NAME = "config.yaml"
_TEMPLATES = Path(__file__).parent / "templates"


def template_text(name: str) -> str:
    return (_TEMPLATES / name).read_text(encoding="utf-8")


def parse(text: str, where: str) -> dict[str, Any]:
    """The mapping in a YAML configuration file (CorruptFile when it is not YAML)."""
    fast = _plain_mapping(text)
    return fast if fast is not None else yamlio.load_yaml(text, where=where)


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*")
# quoted text without escapes, controls or characters YAML treats as line breaks
_DOUBLE = re.compile('"[^"\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]*"')
_SINGLE = re.compile("'[^'\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]*'")
# YAML 1.1 (PyYAML) reads these plain words as booleans or null, in any case
_SPECIAL_WORDS = frozenset(("yes", "no", "on", "off", "true", "false", "null", "y", "n"))
_NO = object()


def _scalar(text: str) -> Any:
    """The value PyYAML gives a scalar of the accepted forms, or _NO."""
    if text in ("true", "false"):
        return text == "true"
    if _DOUBLE.fullmatch(text) or _SINGLE.fullmatch(text):
        return text[1:-1]
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _WORD.fullmatch(text) and text.lower() not in _SPECIAL_WORDS:
        return text
    return _NO


def _plain_mapping(text: str) -> dict[str, Any] | None:
    """Nested block mappings of simple scalars, as PyYAML reads them; None otherwise."""
    if "\t" in text or "\r" in text or text.startswith("\ufeff"):
        return None
    root: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(0, root)]  # (indent of its keys, mapping)
    opened: tuple[int, dict[str, Any], str] | None = None  # `key:` with nothing after it
    for line in text.split("\n"):
        body = line.lstrip(" ").rstrip(" ")
        if not body or body.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        key, colon, rest = body.partition(":")
        if (not colon or not _KEY.fullmatch(key) or key.lower() in _SPECIAL_WORDS
                or (rest and not rest.startswith(" "))):
            return None  # not `key: ...`, or a key YAML reads as a boolean or null
        if opened is not None and indent > opened[0]:  # the section `opened` starts here
            child: dict[str, Any] = {}
            opened[1][opened[2]] = child
            stack.append((indent, child))
        opened = None
        while indent < stack[-1][0]:
            stack.pop()
        if indent != stack[-1][0] or key in stack[-1][1]:
            return None  # misaligned, or a duplicate key
        value = rest.strip(" ")
        if not value:
            stack[-1][1][key] = None  # null, unless indented lines follow
            opened = (indent, stack[-1][1], key)
            continue
        scalar = _scalar(value)
        if scalar is _NO:
            return None
        stack[-1][1][key] = scalar
    return root


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
            raise UsageError(f"{CONFIG_NAME}: {dotted} must be a non-negative number, "
                             f"not {value!r}")
        return float(value)

    def typed(self, dotted: str, default: float, kind: type[int] | type[float]) -> Any:
        """A numeric setting as `kind`; E100 naming the key when it is not a number."""
        raw = self.get(dotted, default)
        try:
            return kind(default if raw is None else raw)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"{dotted} in {CONFIG_NAME} must be a number",
                             hint=f"the default is {default}") from exc

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node
