"""Self-check questions, one module per chapter (``ch00`` ... ``ch08``).

Each module registers :class:`commlib.check.Question` objects whose answers
are computed by commlib. Importing a module registers its questions.
"""
