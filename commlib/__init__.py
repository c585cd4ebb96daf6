"""commlib: the model and view code behind "Gradients on the Wire".

Model layer (pure, SI units): :mod:`units`, :mod:`hardware`, :mod:`cost`,
and the executable simulations. View layer (widgets and figures):
:mod:`calculator`, :mod:`plots`. Chapters import what they need::

    from commlib import cost, hardware, units
"""

__version__ = "0.1.0"
