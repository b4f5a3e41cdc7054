"""The closed loop the recording was taken in, simulated: the controller's model
(:mod:`dynid.identify.closed_loop.controller`), the direct dynamics of the identified model under it
(:mod:`.simulation`), and the equations of the simulated states (the instruments of IDIM-IV and the regressor of DIDIM,
:mod:`.instruments`).
"""
