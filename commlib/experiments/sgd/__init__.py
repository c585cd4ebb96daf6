"""Experiments of chapters 4 and 5 (SGD protocols, staleness, overlap): the runs the chapters quote and plot."""
