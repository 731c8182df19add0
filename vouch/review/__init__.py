"""What a reviewer sees: a proposal with the text it cites and what it may repeat."""
