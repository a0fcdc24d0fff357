"""ttinterp's Triton backend plugin (entry point group ``triton.backends``, name ``ttinterp``).

Triton imports ``compiler`` and ``driver`` from here and takes the one ``BaseBackend`` and the one
``DriverBase`` subclass in each.
"""
