"""Networks (chapter 6): physical topologies, the load a collective puts on their links, and placement.

* :mod:`~commlib.network.topology`: graphs of links, routes, max-min fair sharing, traces mapped on links;
* :mod:`~commlib.network.placement`: how long synchronisation takes for a placement of workers on hosts;
* :mod:`~commlib.network.calculators`: what the chapter's calculator computes.
"""
