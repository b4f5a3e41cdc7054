"""The checks a plug-in meets, one per kind, as dynid's own meet them in its test suite (scikit-learn's
``check_estimator`` / ``parametrize_with_checks``): an identification method, a friction law, a prior source and a
feedforward term, each checked for the fields of its contract and on a short recording of dynid's digital twin
(:mod:`dynid.testing.twin`, made once per process). A check raises AssertionError naming the check, the plug-in and
what it found; :func:`all_checks` pairs every registered plug-in with its check::

    from dynid.testing import check_friction_law
    from my_laws.tanh import LAW

    def test_my_law_meets_dynids_checks():
        register_law(LAW)          # or installed by its entry point
        check_friction_law(LAW)

Importing this package imports none of the identification (the checks import what they run when they run).
"""

from dynid.testing.laws import check_friction_law
from dynid.testing.methods import check_method
from dynid.testing.plugins import KINDS, all_checks, check_id, plugin_checks
from dynid.testing.priors import check_prior_source
from dynid.testing.terms import check_feedforward_term

__all__ = ['KINDS', 'all_checks', 'check_feedforward_term', 'check_friction_law', 'check_id', 'check_method',
           'check_prior_source', 'plugin_checks']
