"""The names identification accepts: methods, friction models, torque sources.

Kept apart from the pipeline so that ``dynid identify --help`` lists them without importing it
(pinocchio, scipy: most of a second): the methods' names come from the registry's metadata
(:mod:`dynid.identify.registry`), which imports no method. :mod:`dynid.identify.methods` and
:mod:`dynid.identify.equations.problem` describe what each one means.
"""

from dynid.friction.laws import LawNames
from dynid.identify.registry import MethodNames, MethodOption

#: The caller leaves the choice to the identification (:mod:`dynid.identify.selection.choice`: blocked
#: cross-validation).
AUTO = 'auto'
#: The registered methods' names, read at each use (installed entry points, then those registered in the process).
METHODS = MethodNames()
#: The registered friction laws' names, read at each use (:mod:`dynid.friction.laws`).
FRICTION_MODELS = LawNames()
TORQUE_SOURCES = ('auto', 'current', 'motor_torque', 'joint_torque')
#: IRLS weight functions (:data:`dynid.identify.solve.solvers.WEIGHT_FUNCTIONS`: their tuning constants).
WEIGHT_FUNCTIONS = ('huber', 'tukey', 'cauchy')
#: The robust methods' option (IRLS, I-IRLS; also what the automatic choice scores IRLS with): their weight function.
WEIGHT_FUNCTION = MethodOption('weight_function', 'str', 'huber', "robust weight function of each joint's scaled "
                               'residual', choices=WEIGHT_FUNCTIONS, flag=True)
#: The drive-gain methods' option (TLS, MLS): the gains held, JOINT=VALUE items
#: (:func:`dynid.identify.solve.drive_gains.parse_fixed_gains`).
FIX_DRIVE_GAIN = MethodOption(
    'fix_drive_gain', 'list', (), "hold these joints' drive gains, JOINT=VALUE [N·m/A], and identify the others; for "
                                  'joints the known payload does not load', flag=True,
    metavar='JOINT=VALUE')
#: Solvers of the physically consistent identification (:mod:`dynid.identify.solve.physical`).
SOLVERS = ('clarabel', 'scs', 'log_cholesky')
