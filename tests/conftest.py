"""Test settings shared by every test module.

Hypothesis runs derandomized: the same examples on every run and machine, so
a failure in CI reproduces locally and a green run stays green. Set
HYPOTHESIS_PROFILE=explore to search with fresh random examples.
"""

import os

from hypothesis import settings

settings.register_profile("book", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "book"))
