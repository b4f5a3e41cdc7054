"""The command line's spelling of the settings fields that core errors name (:class:`dynid.errors.InputError`).

Every option's destination is its flag without the dashes (``--joint-states-effort`` →
``joint_states_effort``), so the field a core error names is spelled back as that flag; the few that differ
are listed in :data:`FLAGS`.
"""

from __future__ import annotations

from dynid.errors import InputError

#: How the command line takes the settings the core's advice names (``{}``: the value): the diagnosis's
#: (:func:`dynid.diagnosis.diagnose`), a refusal's ways out and a kept result's warning
#: (:class:`dynid.identify.job.workflow.Identification` ``spelling``; ``dynid identify`` adds the methods' flagged
#: options, :func:`dynid.cli.identify.advice_spelling`).
ADVICE = {'torque_sign': '--torque-sign {}', 'joint_states_effort': '--joint-states-effort {}',
          'torque_source': '--torque {}', 'decimation_cutoff_hz': '--decimation-cutoff {}', 'force': '--force',
          'payload_com': '--payload-com', 'prior': 'without --no-prior',
          'payload_mass': '--payload-mass {}', 'drives': '--drives {}', 'method': '--method {}',
          'physical': '--physical', 'method_option': '--method-option'}
#: The fields whose option is not the field's name with dashes: ``torque_source`` is ``--torque``; a list option is
#: given once per item (``--exclude-joint``, ``--change``); ``prior`` is on unless ``--no-prior`` (an advice to use
#: the prior says to leave that out); ``prior_source`` is ``--prior FILE``; ``results``, the result files a fleet prior
#: pools, are ``dynid fleet prior``'s RESULT arguments; a method's own option (``controller_gains``) is an item of
#: ``--method-option``.
FLAGS = {'torque_source': '--torque', 'exclude_joints': '--exclude-joint', 'joint_changes': '--change',
         'prior': 'without --no-prior', 'prior_source': '--prior', 'results': 'RESULT',
         'controller_gains': '--method-option controller_gains=FILE'}


def flag(field: str) -> str:
    """``joint_states_effort`` → ``--joint-states-effort`` (:data:`FLAGS` where the option is named otherwise)."""
    return FLAGS.get(field, '--' + field.replace('_', '-'))


def message(error: InputError) -> str:
    """The error's one-line message with the fields it names spelled as this command's flags."""
    return error.spelled(flag)
