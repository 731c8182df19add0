"""A committed `embedding.model` is input: its files are read within bounds.

The third outsider committed a "team model" whose config.json is a link to /dev/zero:
search and doctor read it without end (1.5 GB, then E200 MemoryError). Each model file
must now be a regular file within its size limit, checked before anything is read, and
the refusal is a clear error naming the setting.
"""

from __future__ import annotations

import pytest
from conftest import git
from gate_support import bounded_vouch

from vouch.store.kb import KB


@pytest.mark.parametrize("target", ["/dev/zero", "huge"])
def test_a_model_file_that_is_not_a_bounded_regular_file_is_refused(
    kb_with_sources: KB, target: str
) -> None:
    kb = kb_with_sources
    model = kb.root / "models" / "m"
    model.mkdir(parents=True)
    if target == "huge":
        with open(kb.root / "huge.json", "wb") as fh:
            fh.truncate(2 << 30)  # sparse: 2 GiB of zeros, no disk used
        target = str(kb.root / "huge.json")
    (model / "config.json").symlink_to(target)
    (model / "tokenizer.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"\0" * 16)
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace("model: default", "model: models/m"))
    git(kb.root, "add", "models/m", ".vouch/config.yaml")
    git(kb.root, "commit", "-qm", "use our team model")
    for args in (("search", "deploy"), ("doctor",)):
        res = bounded_vouch(kb.root, *args, limit=3 << 30)
        assert res.returncode == 1, (args, res.stderr)
        assert "Traceback" not in res.stderr and "E200" not in res.stderr, res.stderr
        said = res.stdout + res.stderr
        assert "config.json" in said and "models/m" in said, (args, said)
