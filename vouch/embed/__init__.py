"""Embeddings: the only importer of model2vec, and the query tokenizer."""
