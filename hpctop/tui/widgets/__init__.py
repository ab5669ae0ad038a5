"""Panes of the console, each self-contained: data in through a setter, drawing via the Line API."""
