"""From parsed command-line values to a method call, and from its result to output.

Shared by the generated commands (`build`) and their customisations (`custom`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vouch.cli.options import Output, key_values
from vouch.errors import NotFound, UsageError
from vouch.methods import registry as ops


def option_names(method: ops.Method, param: ops.Param) -> tuple[str, ...]:
    """The spellings of a parameter's option: declared ones, else `--dashed-name`."""
    return method.cli.names.get(param.name) or (f"--{param.name.replace('_', '-')}",)


def params_from(method: ops.Method, values: dict[str, Any]) -> dict[str, Any]:
    """The method's parameters from parsed click values (None: not given)."""
    spec = method.cli
    params: dict[str, Any] = dict(spec.presets)
    for param in method.params:
        if param.name in spec.presets:
            continue
        value = values.pop(param.name, None)
        kind = param.schema.get("type")
        if kind == "array" and value is not None and param.name not in spec.args:
            value = [v.strip() for item in value for v in item.split(",") if v.strip()] or None
        elif kind == "object":
            found = key_values(value or (), option_names(method, param)[0])
            for key in spec.keys.get(param.name, ()):
                given = values.pop(f"{param.name}__{key}", ())
                if given:
                    found[key] = given[-1]
            value = found or None
        elif param.name in spec.files and value is not None:
            value = _read_text(value)
        params[param.name] = value
    return params


def _read_text(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise NotFound(f"no such file: {name}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {name}: {exc}") from exc


def resolve(ref: str | None) -> Callable[..., Any] | None:
    """`module:function` → the function (imported now, not at start-up)."""
    if ref is None:
        return None
    module, _, attr = ref.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return found


def emit(method: ops.Method, out: Output, result: Any) -> None:
    printer = resolve(method.cli.emit)
    if printer is not None:
        printer(out, result)
    else:
        out.emit(result, resolve(method.cli.human))
