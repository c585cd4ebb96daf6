"""Views of chapters 4 and 5: protocol timelines, error curves, staleness, overlap."""
