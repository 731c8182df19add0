"""The README stays true to the code: its configuration reference is generated from
what vouch reads (scripts/config_reference.py), so a key added, renamed or given a new
default fails here until the README is regenerated. (The quick start runs in `.ci/run`,
in a fresh environment where pip may build nothing from source.)"""

from __future__ import annotations

from pathlib import Path

from conftest import script

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_configuration_reference_is_generated_from_what_vouch_reads() -> None:
    reference = script("config_reference")
    text = README.read_text(encoding="utf-8")
    assert reference.rewritten(text) == text, "run: python scripts/config_reference.py"
    block = reference.block()
    for key in ("review.approver_role", "index.auto_refresh", "search.similarity_floor"):
        assert f"| `{key}` |" in block
