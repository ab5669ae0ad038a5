"""Screens and modals pushed over the main screen (help, job detail, confirmations, inputs)."""
