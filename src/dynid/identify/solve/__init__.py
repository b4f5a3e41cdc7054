"""The solvers and the priors: the stacked rows, their noise, the estimators, the drive gains, the physically
consistent solve, and the prior's sources (the robot file, a previous result, a fleet) behind one interface."""
