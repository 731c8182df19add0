"""The health of a knowledge base: lint (its files and their history), source
verification, and the doctor that reports both with the index, the audit chain and the
configuration. Reads only; nothing here writes or prints."""
