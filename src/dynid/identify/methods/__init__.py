"""dynid's own identification methods, one module each, each registered in the entry-point group
``dynid.identification_methods`` (setup.py) as another package's would be: what a method is and the registry are in
:mod:`dynid.identify.registry`."""
