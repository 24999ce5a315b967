"""Reusable Textual widgets: data in by attributes, Messages out; no files, no databases."""
