"""What the configuration asks of the index, resolved once per open."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from vouch.embed import model as embed
from vouch.errors import UsageError, VouchError
from vouch.index import location, store
from vouch.index.lexical import BACKENDS
from vouch.store import state
from vouch.store.kb import KB


class Settings(NamedTuple):
    """The index a knowledge base's configuration asks for, and where it lives."""

    kb_path: str  # canonical path of the .vouch directory this index belongs to
    lexical: str  # fts5 | whoosh
    model: embed.ModelRef | None  # None: embeddings disabled (lexical-only)
    tokenizer: str
    auto_refresh: bool
    index_dir: Path  # where the index lives (vouch.index.location)
    where: str  # location.REPOSITORY | CACHE | ENVIRONMENT
    # this clone's random id (`.git/vouch/`), recorded by the build: an index another
    # clone built — committed by a pull request at the path this clone checks out at,
    # or copied in — is rebuilt from the files, never served ("" when the git directory
    # cannot be written: the index then lives in this user's cache)
    clone: str = ""

    @property
    def model_id(self) -> str:
        return self.model.model_id if self.model else "none"

    @property
    def dims(self) -> int:
        return self.model.dims if self.model else 0

    @classmethod
    def of(cls, kb: KB) -> Settings:
        config = kb.config
        lexical = str(config.get("index.lexical", "fts5") or "fts5")
        if lexical not in BACKENDS:
            raise UsageError(
                f"index.lexical {lexical!r} is not a lexical backend",
                hint="one of: " + ", ".join(BACKENDS),
            )
        auto = config.get("index.auto_refresh", True)
        kb_path = str(kb.dir.resolve())
        found = location.locate(kb.dir, kb_path)
        try:
            clone = state.clone_id(kb)
        except (OSError, VouchError):  # no usable git directory state: not checked
            clone = ""
        return cls(
            kb_path=kb_path,
            lexical=lexical,
            model=embed.resolve(config, kb.root),
            tokenizer=store.tokenizer_preference(),
            auto_refresh=auto is not False,
            index_dir=found.path,
            where=found.kind,
            clone=clone,
        )

    def in_cache(self) -> Settings:
        """These settings with the index in the per-user cache: where it goes when
        `.vouch/index/` turned out not to be writable after all."""
        found = location.in_cache(self.kb_path)
        return self._replace(index_dir=found.path, where=found.kind)

    def mismatch(self, meta: store.Meta) -> str | None:
        """Why an index built under `meta` cannot serve these settings (None: it can).

        Any of these needs a full rebuild; a content change alone does not.
        """
        checks = (
            ("schema_version", str(store.SCHEMA_VERSION)),
            ("tokenizer", self.tokenizer),
            ("embedding_model", self.model_id),
            ("embedding_dims", str(self.dims)),
            ("chunker_version", store.CHUNKER_VERSION),
            ("lexical", self.lexical),
        )
        for key, wanted in checks:
            if meta[key] != wanted:
                return f"{key} is {meta[key]!r}, configuration wants {wanted!r}"
        if self.clone and meta.values.get("built_by") != self.clone:
            return "another clone built this index (a committed or copied index is never served)"
        return None
