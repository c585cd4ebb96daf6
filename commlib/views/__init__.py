"""View layer: calculators (ipywidgets) and figures/animations (matplotlib).

Everything here calls the model layer and nothing else; nothing in the
model layer imports from here.
"""
