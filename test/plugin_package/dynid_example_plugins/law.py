"""Coulomb friction smoothed by tanh(ω/10 mrad/s), viscous friction and an offset, under this package's own symbols:
f = Ct·tanh(ω/ω_t) + Cv·ω + Co."""

import numpy as np

from dynid.friction.law import ONE, VELOCITY, Feature, FrictionLaw

#: ω_t [rad/s]: the speed over which the Coulomb level is reached
SMOOTHING = 0.01

LAW = FrictionLaw('tanh_viscous', 'tanh-smoothed Coulomb + viscous + offset', ('Ct', 'Cv', 'Co'),
                  {'Ct': Feature('tanh_10mrad', lambda w, s: np.tanh(w / SMOOTHING)), 'Cv': VELOCITY, 'Co': ONE},
                  non_negative=('Ct', 'Cv'), roles={'Fc': 'Ct', 'Fv': 'Cv', 'tau0': 'Co'})
