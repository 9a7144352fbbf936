"""Analyses over run directories and models beyond the per-run metrics (paper-specific)."""
