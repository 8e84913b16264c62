"""Adaptation axis: provider wire formats, in and out."""
