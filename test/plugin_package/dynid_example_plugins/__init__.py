"""A package of dynid plug-ins as another project would write it, one of each kind: an identification method
(``ridge``), a friction law with its own symbol names (``tanh_viscous``), a prior source kind (``base_table``) and a
feedforward term (``cable_spring``), registered by the entry points of its ``.dist-info``."""
