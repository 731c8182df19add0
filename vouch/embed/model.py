"""Text embeddings: the only importer of model2vec.

The default model ships inside the package (`vouch/models/default`, see its
PROVENANCE.md) and loads with no network. `embedding.model` may name any model2vec model
directory instead; `embedding.enabled: false` turns vectors off (lexical-only search).

Three ways to embed, giving the same vectors:
- `Embedder.encode` runs model2vec's `StaticModel` — used for documents, in bulk;
- `Embedder.encode_joined` makes the vectors of transcript turns with their neighbours
  from each turn's tokens, tokenized once (`vouch.embed.joined`);
- `Embedder.encode_query` reproduces model2vec's arithmetic for one short text with just
  the tokenizer and the vector table (`vouch.embed.table`), because `import model2vec`
  plus `StaticModel.from_pretrained` cost ~0.3 s before a cold `vouch search` could
  answer; plain ASCII queries are tokenized by `vouch.wordpiece` from a table the index
  keeps (~2 ms to load) instead of `tokenizers` (~25 ms). Models whose files need
  model2vec's extra machinery (vocabulary quantisation: weights, token mappings) fall
  back to model2vec.

An index fitted to its knowledge base's text (`vouch.embed.fitted`) weighs each token:
`encode_fitting` counts the weights while embedding a whole corpus, `encode_weighted`
and `encode_query(..., weigh=)` use them. Those vectors are vouch's own arithmetic
(model2vec has no per-token weights); a model without a plain table is never fitted.
"""

from __future__ import annotations

import hashlib
import json
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from vouch.embed import fitted, wordpiece
from vouch.embed.table import NotTableModel, TableEncoder
from vouch.errors import ModelFailure, UsageError

if TYPE_CHECKING:
    import numpy as np

    from vouch.core.config import Config
    from vouch.core.progress import Progress

Weigh = Callable[[Sequence[int]], "np.ndarray"]  # token ids -> their fitted weights

DEFAULT_NAME = "default"
_FEW = 64  # up to this many texts are embedded without loading model2vec
_MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")


def default_model_dir() -> Path:
    return Path(__file__).parent.parent / "models" / DEFAULT_NAME


class ModelRef(NamedTuple):
    """Which model the configuration names, identified without loading it."""

    name: str  # "default" or the configured path
    path: Path
    model_id: str  # changes whenever the model's files do
    dims: int


def resolve(config: Config, base: Path | None = None) -> ModelRef | None:
    """The configured model, or None when embeddings are disabled.

    A relative `embedding.model` path is taken from `base` (the repository root), so the
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


_SAMPLE = 64 * 1024
# what each model file may weigh: a committed `embedding.model` is input, and a link to
# /dev/zero or a huge file must be refused before anything is read
_LIMITS = {"config.json": 1 << 20, "tokenizer.json": 256 << 20, "model.safetensors": 8 << 30}


def _regular_size(path: Path) -> int:
    """The size of a regular file (links followed), within its limit; ValueError else."""
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path.name} is not a regular file")
    if st.st_size > _LIMITS[path.name]:
        raise ValueError(f"{path.name} is larger than {_LIMITS[path.name]} bytes")
    return st.st_size


def _sampled(weights: Path, size: int) -> bytes:
    """The first, middle and last `_SAMPLE` bytes of the weights file."""
    with weights.open("rb") as fh:
        parts = []
        for start in (0, max(0, size // 2 - _SAMPLE // 2), max(0, size - _SAMPLE)):
            fh.seek(start)
            parts.append(fh.read(_SAMPLE))
    return b"".join(parts)


def describe(path: Path, name: str | None = None) -> ModelRef:
    """Identify the model2vec directory at `path` from its config, its files' sizes and
    a sample of its weights.

    A retrained table keeps its shape, its config and so every size (the bundled model's
    did), but changes its rows throughout: the first, middle and last `_SAMPLE` bytes of
    the weights file tell it apart for ~0.1 ms, where hashing all 8 MB per cold search
    would not be cheap. An edit confined to rows outside the samples goes unnoticed until
    `vouch index rebuild`.
    """
    try:
        sizes = [_regular_size(path / f) for f in _MODEL_FILES]
        with (path / "config.json").open("rb") as fh:
            config_bytes = fh.read(_LIMITS["config.json"] + 1)
        if len(config_bytes) != sizes[0]:
            raise ValueError("config.json changed while it was read")
        sizes = sizes[1:]
        config = json.loads(config_bytes)
        weights = _sampled(path / "model.safetensors", sizes[-1])
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"no usable model2vec model at {path}: {exc}",
            hint="set embedding.model to `default` or to a model2vec model directory, "
            "or embedding.enabled: false",
        ) from exc
    digest = hashlib.sha256(config_bytes + json.dumps(sizes).encode() + weights).hexdigest()[:12]
    label = name or str(path)
    dims = int(config.get("hidden_dim") or config.get("apply_pca") or 0)
    return ModelRef(name=label, path=path, model_id=f"{path.name}@{digest}", dims=dims)


class Embedder:
    """One loaded model. Vectors are float32 and L2-normalised (cosine = dot product)."""

    def __init__(self, ref: ModelRef):
        self.ref = ref
        self._static: Any = None
        self._fast: TableEncoder | None = None
        self._fast_failed = False
        self._words: wordpiece.WordPiece | None = None
        self._words_tried: set[Path] = set()
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
        if len(texts) <= _FEW:  # a refresh of a few objects: no model2vec import (~0.4 s)
            few = [self._fast_encode(t) for t in texts]
            if all(v is not None for v in few):
                return np.stack(few)  # type: ignore[arg-type]
        model = self._model()
        # model2vec spreads batches over threads (numpy and the tokenizer release the
        # GIL) above 10k texts: ~25% faster on two cores
        vecs = model.encode(list(texts), normalize=True)
        out: np.ndarray = np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)
        return out

    def encode_plain(self, texts: Sequence[str]) -> np.ndarray:
        """`encode` of many texts at once, unweighted: one batched tokenization and the
        table when the model allows it (no model2vec import), else `encode`."""
        import numpy as np

        fast = self._table()
        if fast is None or not texts:
            return self.encode(texts)
        try:
            known = fast.known_ids(list(texts))
            if len(known) > _FEW:
                fast.table.whole()  # read once (~7 ms), rather than row by row per text
            return np.stack([fast.mean(ids) for ids in known])
        except NotTableModel:
            return self.encode(texts)

    def encode_joined(self, items: Sequence[tuple[str, ...]]) -> np.ndarray:
        """`encode` of `"\n".join(parts)` for each item, the same vectors: items of
        several parts (transcript turns with their neighbours) are made from each
        distinct part's tokens (`vouch.embed.joined`) when the model allows it."""
        import numpy as np

        several = [i for i, parts in enumerate(items) if len(parts) > 1]
        fast = self._table() if len(several) > _FEW else None
        try:
            made = fast.encode_joined([items[i] for i in several]) if fast else None
        except NotTableModel:
            made = None
        if made is None:
            return self.encode(["\n".join(parts) for parts in items])
        vectors, missed = made
        out = np.empty((len(items), self.dims), dtype=np.float32)
        out[several] = vectors
        rest = sorted(set(range(len(items))).difference(several).union(several[j] for j in missed))
        if rest:
            out[rest] = self.encode(["\n".join(items[i]) for i in rest])
        return out

    def encode_query(
        self, text: str, words: Path | None = None, weigh: Weigh | None = None
    ) -> np.ndarray:
        """One query vector, shape (dims,); model2vec's result, without importing it,
        or with `weigh` the fitted index's weighted vector.

        `words` is a `vouch.wordpiece` table for this model (see `wordpiece_table`);
        without one, or for text it declines, the `tokenizers` library tokenizes."""
        fast = self._table()
        table = self._wordpiece(words) if fast is not None else None
        if fast is not None and table is not None:
            ids = table.ids(fast.cut(text, table.median_token_length))
            if ids is not None:
                known = fast.known(ids, table.unk_id)
                return fast.weighted(known, weigh(known)) if weigh else fast.mean(known)
        if weigh is not None and fast is not None:
            known = fast.known_ids([text])[0]
            return fast.weighted(known, weigh(known))
        found = self._fast_encode(text)
        return found if found is not None else self.encode([text])[0]

    def fittable(self) -> bool:
        """Whether this model's vectors can be weighted (`encode_fitting`): a plain
        table and a tokenizer vouch can drive (not a unigram one)."""
        fast = self._table()
        try:
            return fast is not None and fast._tokenizers() is not None
        except NotTableModel:
            return False

    def encode_fitting(
        self, items: Sequence[tuple[str, ...]], progress: Progress | None = None
    ) -> tuple[np.ndarray, fitted.Fit | None]:
        """Vectors of `items` (each the newline-joined text of its parts) weighted by a
        fit to these texts, and that fit; `encode_joined`'s and None for a corpus too
        small to fit or a model without a plain table."""
        fast = self._table()
        distinct = list(dict.fromkeys(p for parts in items for p in parts))
        if fast is None or not self.fittable() or len(distinct) < fitted.MIN_TEXTS:
            return self.encode_joined(items), None
        tokens = fitted.tokenize(distinct, fast.known_ids, progress)
        fit = fitted.count(tokens, fast.table.vocab)
        return self._weighted(items, distinct, tokens, fit), fit

    def encode_weighted(self, items: Sequence[tuple[str, ...]], fit: fitted.Fit) -> np.ndarray:
        """`encode_fitting`'s vectors under an earlier fit (a refresh, pending chunks)."""
        fast = self._table()
        if fast is None or not self.fittable():
            raise ModelFailure(
                f"embedding model {self.ref.name} cannot weigh tokens",
                hint="run `vouch index rebuild`",
            )
        distinct = list(dict.fromkeys(p for parts in items for p in parts))
        tokens = fitted.tokenize(distinct, fast.known_ids, None)
        return self._weighted(items, distinct, tokens, fit)

    def _weighted(
        self,
        items: Sequence[tuple[str, ...]],
        distinct: list[str],
        tokens: fitted.Tokenized,
        fit: fitted.Fit,
    ) -> np.ndarray:
        import numpy as np

        if not items:
            return np.zeros((0, self.dims), dtype=np.float32)
        fast = self._table()
        assert fast is not None
        summed = fitted.sums(tokens, fast.table.whole(), fit.weights())
        where = {p: i for i, p in enumerate(distinct)}
        return fitted.encode(items, tokens, where, summed)

    def whole_words(self, words: Sequence[str], table: Path | None = None) -> list[bool] | None:
        """For each word, whether the model has a token for all of it (not pieces): a
        query made only of words it splits into pieces (`zzzqqqxxx`) has a vector that
        means nothing. None when this model's tokenizer cannot say."""
        fast = self._table()
        found = self._wordpiece(table) if fast is not None else None
        if found is not None:
            vocab = found.vocab
            return [(w.lower() if found.lowercase else w) in vocab for w in words]
        if fast is None:
            return None
        try:
            tokenizer = fast._tokenizers()
        except NotTableModel:
            return None
        return [tokenizer.token_to_id(w.lower()) is not None for w in words]

    def _fast_encode(self, text: str) -> np.ndarray | None:
        """model2vec's vector through `TableEncoder`; None when this model needs
        model2vec itself."""
        fast = self._table()
        if fast is None:
            return None
        try:
            return fast.encode(text)
        except NotTableModel:
            self._fast, self._fast_failed = None, True
            return None

    def wordpiece_table(self) -> str | None:
        """The `vouch.wordpiece` table of this model, or None when it has none (not a
        BERT WordPiece tokenizer); the index stores it for cold queries."""
        return wordpiece.table_text(self.ref.path / "tokenizer.json", self.model_id)

    def _wordpiece(self, path: Path | None) -> wordpiece.WordPiece | None:
        if self._words is None and path is not None and path not in self._words_tried:
            self._words_tried.add(path)
            self._words = wordpiece.WordPiece.load(path, self.model_id)
        return self._words

    def _table(self) -> TableEncoder | None:
        if self._fast is None and not self._fast_failed:
            with self._lock:
                try:
                    self._fast = TableEncoder(self.ref.path)
                except NotTableModel:
                    self._fast_failed = True
        return self._fast


_LOADED: dict[str, Embedder] = {}
_LOADED_LOCK = threading.Lock()


def embedder(ref: ModelRef) -> Embedder:
    """The process-wide embedder for a model (loaded lazily, on first use)."""
    with _LOADED_LOCK:
        found = _LOADED.get(ref.model_id)
        if found is None:
            found = _LOADED[ref.model_id] = Embedder(ref)
        return found
