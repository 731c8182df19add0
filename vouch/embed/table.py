"""model2vec's arithmetic over a model's vector table, without model2vec.

A model2vec `StaticModel` is a tokenizer and a table of token vectors; a text's vector
is the mean of its known tokens' rows, normalised. `TableEncoder` reproduces that for
one text (`StaticModel._encode_batch`: the mean over the int8/float rows as numpy
computes it, cast to float32, divided by its norm — the same bits), reads only the rows
a query needs through the `safetensors` library (`Table`), and loads the `tokenizers`
tokenizer only for text `vouch.wordpiece` declines. It also gives the token ids the
weighted vectors of `vouch.embed.fitted` are made of, and the same weighted arithmetic
for one query. A model whose files need model2vec's own machinery (vocabulary
quantisation, a unigram tokenizer) raises `NotTableModel`: the caller uses model2vec.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vouch.embed import fitted, joined

if TYPE_CHECKING:
    import numpy as np


class NotTableModel(Exception):
    """The model needs model2vec itself (quantised vocabulary, unusual tokenizer)."""


class TableEncoder:
    """model2vec's encode for one text: tokenize, drop unknowns, mean of rows, normalise."""

    def __init__(self, path: Path):
        try:
            config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise NotTableModel(str(exc)) from exc
        if not isinstance(config, dict) or config.get("normalize") is not True:
            raise NotTableModel("model does not normalise its vectors")
        self.path = path
        self.table = Table(path / "model.safetensors")
        self.dims = self.table.dims
        self.max_length = config.get("max_length", 512)
        self._tokenizer: Any = None  # `tokenizers`, loaded by `_tokenizers()`
        self.unk_id: int | None = None  # set with it
        self._median: int | None = None

    def _tokenizers(self) -> Any:
        if self._tokenizer is None:
            try:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
            except Exception as exc:  # unreadable: let model2vec handle (or report) it
                raise NotTableModel(str(exc)) from exc
            model = tokenizer.model
            if not hasattr(model, "unk_token"):
                raise NotTableModel("unigram tokenizer")
            unk = model.unk_token
            self.unk_id = tokenizer.token_to_id(unk) if unk is not None else None
            tokenizer.no_padding()
            if self.max_length is not None:
                tokenizer.enable_truncation(int(self.max_length))
            self._tokenizer = tokenizer
        return self._tokenizer

    def _median_token_length(self) -> int:
        if self._median is None:
            import numpy as np

            self._median = int(np.median([len(t) for t in self._tokenizers().get_vocab()]))
        return self._median

    def cut(self, text: str, median_token_length: int | None = None) -> str:
        """model2vec keeps max_length × the median token length characters of a text; a
        text no longer than max_length is never cut, so the vocabulary is only scanned
        for long ones."""
        if self.max_length is None or len(text) <= int(self.max_length):
            return text
        median = median_token_length or self._median_token_length()
        return text[: int(self.max_length) * median]

    def encode(self, text: str) -> np.ndarray:
        return self.mean(self.known_ids([text])[0])

    def known_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids as model2vec takes them: cut, truncated, no unknowns."""
        tokenizer = self._tokenizers()
        found = tokenizer.encode_batch_fast([self.cut(t) for t in texts], add_special_tokens=False)
        if self.unk_id is None:
            return [e.ids for e in found]
        return [[i for i in e.ids if i != self.unk_id] for e in found]

    def encode_joined(
        self, items: Sequence[tuple[str, ...]]
    ) -> tuple[np.ndarray, list[int]] | None:
        """`joined.encode` with this model's tokenizer and table; None when they do not
        allow it."""
        tokenizer = self._tokenizers()
        whole = self.table.whole()
        if self.max_length is None or not joined.splits_cleanly(tokenizer, whole):
            return None
        limit = int(self.max_length)
        return joined.encode(
            items, tokenizer, whole, self.unk_id, limit, limit * self._median_token_length()
        )

    def known(self, token_ids: list[int], unk_id: int) -> list[int]:
        """`vouch.wordpiece` token ids (unknowns included, as tokenized) as model2vec
        takes them: truncated, no unknowns."""
        if self.max_length is not None:
            token_ids = token_ids[: int(self.max_length)]  # the tokenizer's truncation
        return [i for i in token_ids if i != unk_id]

    def mean(self, ids: list[int]) -> np.ndarray:
        import numpy as np

        if not ids:
            return np.zeros(self.dims, dtype=np.float32)
        mean = self.table.rows(ids)[None].mean(axis=1).astype(np.float32)
        norm = np.linalg.norm(mean, axis=1, keepdims=True) + 1e-32
        out: np.ndarray = (mean / norm)[0]
        return out

    def weighted(self, ids: list[int], w: np.ndarray) -> np.ndarray:
        """`fitted`'s vector of one text's known ids, `w` their weights: the same
        arithmetic as a build's, over just these rows."""
        import numpy as np

        if not ids:
            return np.zeros(self.dims, dtype=np.float32)
        rows = self.table.rows(ids)
        local = np.arange(len(ids), dtype=np.int64)
        tokens = fitted.Tokenized(local, np.array([0, len(ids)], dtype=np.int64))
        summed = fitted.sums(tokens, rows, np.asarray(w, dtype=np.float64))
        return fitted.normalised(summed[:1], np.array([len(ids)]))[0]


FEW_ROWS = 256  # up to this many rows are read one by one; more: the whole table


class Table:
    """The `embeddings` tensor of model.safetensors, read through the `safetensors`
    library: a query reads its few rows (~10 µs each) rather than the whole 7.5 MB table
    (~7 ms); a batch that needs many rows loads the table once."""

    def __init__(self, path: Path):
        from safetensors import SafetensorError, safe_open

        try:
            self._file = safe_open(str(path), framework="numpy")
            if set(self._file.keys()) != {"embeddings"}:
                raise NotTableModel("model uses weights or token mappings")
            self._slice = self._file.get_slice("embeddings")
            shape = [int(n) for n in self._slice.get_shape()]
        except (SafetensorError, OSError, ValueError, TypeError) as exc:
            raise NotTableModel(f"unreadable safetensors file: {exc}") from exc
        if len(shape) != 2:
            raise NotTableModel("the embeddings tensor is not a table")
        self.vocab, self.dims = shape
        self._whole: np.ndarray | None = None

    def rows(self, ids: list[int]) -> np.ndarray:
        """`table[ids]`: the rows in order, repeats included, shape (len(ids), dims)."""
        import numpy as np

        if self._whole is not None or len(set(ids)) > FEW_ROWS:
            out: np.ndarray = self.whole()[np.array(ids, dtype=np.int64)]
            return out
        read = {i: self._slice[i : i + 1] for i in set(ids)}
        return np.concatenate([read[i] for i in ids])

    def whole(self) -> np.ndarray:
        """The whole table, read once."""
        if self._whole is None:
            self._whole = self._file.get_tensor("embeddings")
        return self._whole
