"""One builder turns every registry method into its click command.

The registry says what a method takes (`Param`: name, JSON schema, default, required)
and how it looks on the command line (`Cli`: verb, positional arguments, option
spellings, a formatter). This module makes the command from those two declarations and
nothing else: option types, defaults, required-ness and help all come from the
parameters, so the CLI, JSONL, MCP and `kb.capabilities` cannot drift apart. A few
named customisations (`vouch.cli.custom`) add CLI-only sugar on top — a progress bar,
`--fts-only` — and never a parameter of their own.
"""

from __future__ import annotations

from typing import Any

import click

from vouch.cli.calling import emit, option_names, params_from
from vouch.cli.options import open_call, shared_params
from vouch.methods import registry as ops


def _click_type(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        return click.Choice([str(v) for v in schema["enum"]])
    low, high = schema.get("minimum"), schema.get("maximum")
    if kind == "integer":
        return click.IntRange(min=low, max=high) if (low, high) != (None, None) else click.INT
    if kind == "number":  # an open range would show as `[x<=None]` in the help
        return click.FloatRange(min=low, max=high) if (low, high) != (None, None) else click.FLOAT
    return click.STRING


def _help(param: ops.Param, extra: str = "") -> str:
    if param.checked_later and "enum" in param.schema:  # listed, and checked by the method
        extra = " ".join(
            x for x in (extra, "(one of: " + ", ".join(param.schema["enum"]) + ")") if x
        )
    return " ".join(x for x in (param.description, extra) if x)


def click_params(method: ops.Method) -> list[click.Parameter]:
    """The click parameters of a method's command, in declaration order."""
    spec = method.cli
    out: list[click.Parameter] = []
    for name in spec.args:
        param = next(p for p in method.params if p.name == name)
        repeat = spec.repeat and name == spec.args[0]
        out.append(
            click.Argument(
                [name],
                nargs=-1 if repeat else 1,
                required=param.required or repeat,
                type=_click_type(param.bound_schema()),
            )
        )
    for param in method.params:
        if param.name in spec.args or param.name in spec.presets:
            continue
        names = [*option_names(method, param), param.name]
        kind = param.schema.get("type")
        if kind == "boolean":
            out.append(
                click.Option(names, is_flag=True, default=bool(param.default), help=_help(param))
            )
        elif kind == "array":
            out.append(
                click.Option(
                    names,
                    multiple=True,
                    metavar="VALUE",
                    required=param.required,
                    help=_help(param, "(repeatable; commas separate values)"),
                )
            )
        elif kind == "object":
            out.append(
                click.Option(
                    names, multiple=True, metavar="KEY=VALUE", help=_help(param, "(repeatable)")
                )
            )
            for key in spec.keys.get(param.name, ()):
                out.append(
                    click.Option(
                        [f"--{key}", f"{param.name}__{key}"],
                        help=f"Only {key} = VALUE ({param.name}).",
                        multiple=True,
                    )
                )
        else:
            metavar = "FILE|-" if param.name in spec.files else None
            out.append(
                click.Option(
                    names,
                    type=_click_type(param.bound_schema()),
                    metavar=metavar,
                    required=param.required,
                    default=param.default,
                    show_default=param.default is not None,
                    help=_help(param),
                )
            )
    return out


def build(method: ops.Method) -> click.Command:
    """The click command of one method (with its customisation, if any)."""
    from vouch.cli import custom  # most commands have none: a cold one skips the module

    spec = method.cli
    extra = custom.CUSTOM.get(method.name)
    writes_actor = method.attributed

    def callback(**values: Any) -> None:
        ctx, out = open_call(values, spec.format)
        if extra is not None and extra.run is not None:
            extra.run(method, ctx, out, values)
            return
        if spec.repeat:
            first = spec.args[0]
            results = []
            for item in values.pop(first):
                params = params_from(method, {**values, first: item})
                results.append(ops.invoke(ctx, method.name, params))
                if not out.json:
                    emit(method, out, results[-1])
            if out.json:
                out.emit(results if len(results) != 1 else results[0])
            return
        result = ops.invoke(ctx, method.name, params_from(method, values))
        emit(method, out, result)

    params = click_params(method)
    if extra is not None:
        params += extra.options()
    return click.Command(
        spec.path(method.name)[-1],
        callback=callback,
        params=[*params, *shared_params(spec.format, writes_actor, spec.formats)],
        help=method.summary + f"\n\nThe CLI of {method.name}.",
        short_help=method.summary,
    )


class VerbGroup(click.Group):
    """`vouch list claims`, `vouch index status`: the registry methods under one word,
    each command built when it is asked for."""

    def __init__(self, name: str, methods: dict[str, ops.Method], help: str | None = None):
        super().__init__(name, help=help)
        self.methods = methods

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in self.methods:
            found = build(self.methods[cmd_name])
            self.add_command(found)
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.methods})

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        from vouch.cli import typos

        typos.check(self, ctx, args)
        return super().resolve_command(ctx, args)


def verbs() -> dict[str, dict[tuple[str, ...], ops.Method]]:
    """First command word → {command path: method} over the whole registry."""
    out: dict[str, dict[tuple[str, ...], ops.Method]] = {}
    for method in ops.REGISTRY.values():
        path = method.command
        out.setdefault(path[0], {})[path] = method
    return out


def command_for(word: str) -> click.Command | None:
    """The command (or verb group) `vouch WORD` runs, built from the registry."""
    found = verbs().get(word)
    if not found:
        return None
    if (word,) in found:
        return build(found[(word,)])
    subs = {path[1]: m for path, m in found.items() if len(path) == 2}
    return VerbGroup(word, subs, help=GROUP_HELP.get(word))


GROUP_HELP = {
    "list": "List objects of a kind: claims, pages, entities, relations, sources.",
    "read": "Read one object of a kind by id.",
    "index": "The derived search index: .vouch/index/, or the user's cache in a read-only "
    "clone (a cache; safe to delete).",
    "source": "Register and inspect sources.",
    "evidence": "Span pointers into sources.",
    "session": "Work sessions: start one, name it on proposals, end it.",
    "migrate": "Upgrade the knowledge to this vouch's schema version: plan shows the "
    "change, apply makes it in one commit (git revert it to roll back).",
}
