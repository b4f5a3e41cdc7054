"""The pipeline's steps after the equations: diagnose, choose, fit, check, and the result assembled
(:func:`dynid.identify.steps.run.identify` runs them in order)."""
