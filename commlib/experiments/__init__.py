"""Experiments: functions that run simulations and return the results a chapter glues or plots.

Model layer (no matplotlib, no ipywidgets): :mod:`.summaries` (shared run
summaries), :mod:`.sync_async` (chapter 4), :mod:`.staleness` (chapter 5).
"""
