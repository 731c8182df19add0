"""BERT's WordPiece tokenization of plain ASCII text, in pure Python, for query vectors.

A cold `vouch search` embeds one short query. With the `tokenizers` library that costs
~25 ms before the first token (importing it and parsing the 450 KB tokenizer.json),
while this table loads in ~2 ms. It reproduces `tokenizers` exactly for the text it
accepts — printable ASCII plus tab/newline/carriage return, no special token like
`[CLS]` — and declines (None) anything else, which the caller then gives to
`tokenizers` itself:

- BertNormalizer: control characters removed, tab/newline/CR become spaces, lowercase
  (accent stripping and CJK spacing change no ASCII character);
- BertPreTokenizer: split on whitespace; every ASCII punctuation character is a word;
- WordPiece: greedy longest match, `##` continuations, a word with an unknown piece or
  longer than `max_input_chars_per_word` is one unknown token.

The table is derived from a model's tokenizer.json (`table_text`) and stored by the index
(`.vouch/index/`), one token per line in id order after a JSON header naming the model
it belongs to.
"""

from __future__ import annotations

import hashlib
import json
import string
from pathlib import Path
from typing import Any

FORMAT = 1
_PUNCTUATION = frozenset(string.punctuation)  # exactly Rust's is_ascii_punctuation
_ALLOWED_CONTROLS = frozenset("\t\n\r")
_SPACES = " \t\n\r"


def table_text(tokenizer_json: Path, model_id: str) -> str | None:
    """The table for a tokenizer.json, or None when it is not a BERT WordPiece tokenizer
    this module reproduces (the query path then uses `tokenizers`)."""
    try:
        spec = json.loads(tokenizer_json.read_text(encoding="utf-8"))
        normalizer, pre, model = spec["normalizer"], spec["pre_tokenizer"], spec["model"]
        vocab: dict[str, int] = model["vocab"]
        if (
            normalizer.get("type") != "BertNormalizer"
            or normalizer.get("clean_text") is not True
            or not isinstance(normalizer.get("lowercase"), bool)
            or pre.get("type") != "BertPreTokenizer"
            or model.get("type") != "WordPiece"
            or not isinstance(model.get("continuing_subword_prefix"), str)
            or not isinstance(model.get("max_input_chars_per_word"), int)
            or model.get("unk_token") not in vocab
        ):
            return None
        added = [str(t["content"]) for t in spec.get("added_tokens") or ()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    tokens = sorted(vocab, key=vocab.__getitem__)
    if [vocab[t] for t in tokens] != list(range(len(tokens))) or any(
        "\n" in t or "\r" in t for t in tokens
    ):
        return None  # ids with gaps, or tokens a line-per-token file cannot hold
    header = {
        "format": FORMAT,
        "model_id": model_id,
        "lowercase": normalizer["lowercase"],
        "unk": model["unk_token"],
        "prefix": model["continuing_subword_prefix"],
        "max_chars": model["max_input_chars_per_word"],
        "added": added,
        "median_token_length": _median_length(set(vocab) | set(added)),
    }
    body = "\n".join(tokens)
    header["sha256"] = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return json.dumps(header, ensure_ascii=True) + "\n" + body


def _median_length(tokens: set[str]) -> int:
    """model2vec's `int(np.median([len(t) for t in vocabulary]))` (the vocabulary with
    added tokens), which sets how many characters of a long text it keeps."""
    lengths = sorted(len(t) for t in tokens)
    mid = len(lengths) // 2
    if len(lengths) % 2:
        return lengths[mid]
    return int((lengths[mid - 1] + lengths[mid]) / 2)


class WordPiece:
    def __init__(self, header: dict[str, Any], tokens: list[str]):
        self.vocab = dict(zip(tokens, range(len(tokens)), strict=True))
        self.lowercase = bool(header["lowercase"])
        self.unk_id = self.vocab[header["unk"]]
        self.prefix = str(header["prefix"])
        self.max_chars = int(header["max_chars"])
        self.added = tuple(str(t) for t in header["added"] if t)
        self.median_token_length = int(header["median_token_length"])

    @classmethod
    def load(cls, path: Path, model_id: str) -> WordPiece | None:
        """The table at `path` if it was made for this model (and this format) and its
        tokens match the header's checksum, else None."""
        try:
            text = path.read_text(encoding="utf-8")
            first, _, rest = text.partition("\n")
            header = json.loads(first)
            if header.get("format") != FORMAT or header.get("model_id") != model_id:
                return None
            digest = header.get("sha256")  # absent in tables written before it was added
            if digest is not None and hashlib.sha256(rest.encode("utf-8")).hexdigest() != digest:
                return None  # damaged: a missing token would silently change query vectors
            return cls(header, rest.split("\n"))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def ids(self, text: str) -> list[int] | None:
        """Token ids as `tokenizers` gives them (unknown words included), or None when the
        text is not plain printable ASCII or holds a special token."""
        if not text.isascii():
            return None
        for ch in text:
            if (ch < " " and ch not in _ALLOWED_CONTROLS) or ch == "\x7f":
                return None
        lowered = text.lower() if self.lowercase else text
        if any(t in text or t in lowered for t in self.added):
            return None  # `tokenizers` matches added tokens before normalizing
        out: list[int] = []
        for word in _words(lowered):
            out.extend(self._pieces(word))
        return out

    def _pieces(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [self.unk_id]
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while start < end:
                found = self.vocab.get(
                    word[start:end] if start == 0 else self.prefix + word[start:end]
                )
                if found is not None:
                    break
                end -= 1
            else:
                return [self.unk_id]  # no piece matches here: the whole word is unknown
            pieces.append(found)
            start = end
        return pieces


def _words(text: str) -> list[str]:
    """BertPreTokenizer on ASCII: whitespace separates, punctuation stands alone."""
    words: list[str] = []
    current: list[str] = []
    for ch in text:
        if ch in _SPACES or ch in _PUNCTUATION:
            if current:
                words.append("".join(current))
                current = []
            if ch in _PUNCTUATION:
                words.append(ch)
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words
