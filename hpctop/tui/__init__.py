"""The Textual console. The only package that imports Textual."""
