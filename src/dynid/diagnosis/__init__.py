"""What a recording holds before anything is fitted: effort meaning, sign, scale, rate, robot-file agreement; one
diagnosis per identification, with evidence (:func:`diagnose`, :class:`Diagnosis`)."""

from dynid.diagnosis.diagnosis import Diagnosis, DiagnosisSettings, Finding, JointDiagnosis, diagnose, recordings_of
from dynid.diagnosis.effort import EffortCheck, EffortCheckSettings, Recording, check_effort, check_efforts

__all__ = ['Diagnosis', 'DiagnosisSettings', 'EffortCheck', 'EffortCheckSettings', 'Finding', 'JointDiagnosis',
           'Recording', 'check_effort', 'check_efforts', 'diagnose', 'recordings_of']
