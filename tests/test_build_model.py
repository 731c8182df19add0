"""scripts/build_default_model.py's own arithmetic (the build itself needs torch and the
teacher, see scripts/README.md): the blend of the fitted and distilled tables, and the
options it refuses before loading anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import script

from vouch.embed.model import default_model_dir


@pytest.fixture(scope="module")
def build() -> Any:
    return script("build_default_model")


def test_the_blend_mixes_rows_after_matching_their_mean_length(build: Any) -> None:
    from model2vec import StaticModel

    fitted = StaticModel.from_pretrained(str(default_model_dir()))
    table = np.asarray(fitted.embedding, dtype=np.float64)
    distilled = 2.0 * table[::-1]  # another table, twice as long on average

    half = build._blended(distilled, fitted, 0.5)
    assert half.normalize is True
    assert half.embedding.dtype == np.float32 and half.embedding.shape == table.shape
    expected = 0.5 * (2.0 * table) + 0.5 * distilled  # fitted rows scaled ×2 first
    assert np.allclose(half.embedding, expected, atol=1e-4)
    alone = build._blended(distilled, fitted, 1.0)
    assert np.allclose(alone.embedding, 2.0 * table, atol=1e-4)
    assert half.tokenizer.to_str() == fitted.tokenizer.to_str()


@pytest.mark.parametrize(
    "argv", [["--blend", "0.7"], ["--blend", "1.5", "--corpus", "x"], ["--blend", "-0.1"]]
)
def test_a_blend_without_a_corpus_or_out_of_range_is_refused(
    build: Any, argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        build.main([*argv, "--out", str(tmp_path / "m")])
    assert exc.value.code not in (0, None)
    assert "--blend takes a share from 0 to 1, and only with --corpus" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
