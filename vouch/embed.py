"""Text embeddings: the only importer of model2vec.

The default model ships inside the package (`vouch/models/default`, see its
PROVENANCE.md) and loads with no network. `embedding.model` may name any model2vec model
directory instead; `embedding.enabled: false` turns vectors off (lexical-only search).

Two ways to embed, giving the same vectors:
- `Embedder.encode` runs model2vec's `StaticModel` — used for documents, in bulk;
- `Embedder.encode_query` reproduces model2vec's arithmetic for one short text with just
  the tokenizer and the vector table, because `import model2vec` plus
  `StaticModel.from_pretrained` cost ~0.3 s before a cold `vouch search` could answer,
  while the tokenizer and a memory-light table load in ~40 ms. Models whose files need
  model2vec's extra machinery (vocabulary quantisation: weights, token mappings) fall
  back to model2vec.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vouch.errors import EmbeddingDisabled, ModelFailure, UsageError

if TYPE_CHECKING:
    import numpy as np

DEFAULT_NAME = "default"
_FEW = 64  # up to this many texts are embedded without loading model2vec
_MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")


def default_model_dir() -> Path:
    return Path(__file__).parent / "models" / DEFAULT_NAME


@dataclass(frozen=True)
class ModelRef:
    """Which model the configuration names, identified without loading it."""

    name: str  # "default" or the configured path
    path: Path
    model_id: str  # changes whenever the model's files do
    dims: int


def resolve(config: Any, base: Path | None = None) -> ModelRef | None:
    """The configured model, or None when embeddings are disabled.

    `config` is a `vouch.config.Config` (anything with `.get(dotted, default)`); a
    relative `embedding.model` path is taken from `base` (the repository root), so the
    setting means the same from any working directory.
    """
    if config.get("embedding.enabled", True) is False:
        return None
    name = str(config.get("embedding.model", DEFAULT_NAME) or DEFAULT_NAME)
    if name == DEFAULT_NAME:
        return describe(default_model_dir(), name)
    path = Path(name).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    return describe(path, name)


def describe(path: Path, name: str | None = None) -> ModelRef:
    """Identify the model2vec directory at `path` from its config and file sizes.

    Sizes plus config.json are cheap to read on every command and change whenever the
    model is rebuilt or replaced; hashing 8 MB of weights per cold search would not be.
    """
    try:
        config_bytes = (path / "config.json").read_bytes()
        sizes = [(path / f).stat().st_size for f in _MODEL_FILES[1:]]
        config = json.loads(config_bytes)
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"no usable model2vec model at {path}: {exc}",
            hint="set embedding.model to `default` or to a model2vec model directory, "
                 "or embedding.enabled: false",
        ) from exc
    digest = hashlib.sha256(config_bytes + json.dumps(sizes).encode()).hexdigest()[:12]
    label = name or str(path)
    dims = int(config.get("hidden_dim") or config.get("apply_pca") or 0)
    return ModelRef(name=label, path=path, model_id=f"{path.name}@{digest}", dims=dims)


class Embedder:
    """One loaded model. Vectors are float32 and L2-normalised (cosine = dot product)."""

    def __init__(self, ref: ModelRef):
        self.ref = ref
        self._static: Any = None
        self._fast: _TableEncoder | None = None
        self._fast_failed = False
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self.ref.model_id

    @property
    def dims(self) -> int:
        return self.ref.dims

    def _model(self) -> Any:
        with self._lock:
            if self._static is None:
                try:
                    from model2vec import StaticModel

                    self._static = StaticModel.from_pretrained(str(self.ref.path))
                except Exception as exc:  # model2vec/HF raise many types for a bad dir
                    raise ModelFailure(
                        f"cannot load embedding model {self.ref.name}: {exc}",
                        hint="check embedding.model in config.yaml",
                    ) from exc
            return self._static

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Document vectors, shape (len(texts), dims)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        fast = self._table() if len(texts) <= _FEW else None
        if fast is not None:  # a refresh of a few objects: no model2vec import (~0.4 s)
            return np.stack([fast.encode(t) for t in texts])
        model = self._model()
        # model2vec spreads batches over threads (numpy and the tokenizer release the
        # GIL) above 10k texts: ~25% faster on two cores
        vecs = model.encode(list(texts), normalize=True)
        out: np.ndarray = np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)
        return out

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector, shape (dims,); model2vec's result, without importing it."""
        fast = self._table()
        if fast is not None:
            return fast.encode(text)
        return self.encode([text])[0]

    def _table(self) -> _TableEncoder | None:
        if self._fast is None and not self._fast_failed:
            with self._lock:
                try:
                    self._fast = _TableEncoder(self.ref.path)
                except _NotTableModel:
                    self._fast_failed = True
        return self._fast


class _NotTableModel(Exception):
    """The model needs model2vec itself (quantised vocabulary, unusual tokenizer)."""


class _TableEncoder:
    """model2vec's encode for one text: tokenize, drop unknowns, mean of rows, normalise.

    Mirrors `StaticModel._encode_batch` (mean over the int8/float rows computed as numpy
    does it, then cast to float32 and divided by the norm), so the vectors are identical.
    """

    def __init__(self, path: Path):
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer

            config = json.loads((path / "config.json").read_text(encoding="utf-8"))
            tables = load_file(str(path / "model.safetensors"))
            tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        except Exception as exc:  # any unreadable piece: let model2vec handle (or report) it
            raise _NotTableModel(str(exc)) from exc
        if set(tables) != {"embeddings"} or config.get("normalize") is not True:
            raise _NotTableModel("model uses weights or token mappings")
        model = tokenizer.model
        unk = getattr(model, "unk_token", None)
        if not hasattr(model, "unk_token"):
            raise _NotTableModel("unigram tokenizer")
        self.unk_id = tokenizer.token_to_id(unk) if unk is not None else None
        tokenizer.no_padding()
        self.max_length = config.get("max_length", 512)
        if self.max_length is not None:
            tokenizer.enable_truncation(int(self.max_length))
        self._median: int | None = None
        self.tokenizer = tokenizer
        self.table = tables["embeddings"]
        self.dims = int(self.table.shape[1])

    def _median_token_length(self) -> int:
        if self._median is None:
            import numpy as np

            self._median = int(np.median([len(t) for t in self.tokenizer.get_vocab()]))
        return self._median

    def encode(self, text: str) -> np.ndarray:
        import numpy as np

        if self.max_length is not None and len(text) > int(self.max_length):
            # model2vec cuts texts at max_length × the median token length (in chars);
            # a text this short is never cut, so the vocabulary is only scanned for long ones
            text = text[: int(self.max_length) * self._median_token_length()]
        ids = self.tokenizer.encode_batch_fast([text], add_special_tokens=False)[0].ids
        if self.unk_id is not None:
            ids = [i for i in ids if i != self.unk_id]
        if not ids:
            return np.zeros(self.dims, dtype=np.float32)
        mean = self.table[np.array([ids], dtype=np.int64)].mean(axis=1).astype(np.float32)
        norm = np.linalg.norm(mean, axis=1, keepdims=True) + 1e-32
        out: np.ndarray = (mean / norm)[0]
        return out


_LOADED: dict[str, Embedder] = {}
_LOADED_LOCK = threading.Lock()


def embedder(ref: ModelRef) -> Embedder:
    """The process-wide embedder for a model (loaded lazily, on first use)."""
    with _LOADED_LOCK:
        found = _LOADED.get(ref.model_id)
        if found is None:
            found = _LOADED[ref.model_id] = Embedder(ref)
        return found


def require(config: Any) -> Embedder:
    """The configured embedder, or EmbeddingDisabled for a vector request."""
    ref = resolve(config)
    if ref is None:
        raise EmbeddingDisabled(
            "vector search is off: embedding.enabled is false in config.yaml",
            hint="use lexical search (--fts-only), or set embedding.enabled: true",
        )
    return embedder(ref)
