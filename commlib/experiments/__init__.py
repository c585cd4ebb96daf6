"""Experiments: functions that run simulations and return the results a chapter glues or plots.

Model layer (no matplotlib, no ipywidgets): :mod:`.collectives` (chapters 1
and 2), :mod:`.summaries` (shared run summaries), :mod:`.sync_async`
(chapter 4), :mod:`.staleness` and :mod:`.overlap` (chapter 5), :mod:`.network`
(chapter 6) and :mod:`.today` (chapter 7); :mod:`.claims` holds the claims they register.
"""
