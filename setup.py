"""Build script of the dynid ament_python package (src layout)."""

import os
from glob import glob

from setuptools import find_packages, setup

PACKAGE = 'dynid'

setup(
    name=PACKAGE,
    version='0.1.0',
    description='Robot dynamics identification, estimation and feedforward for ROS 2',
    license='Apache-2.0',
    python_requires='>=3.10',
    package_dir={'': 'src'},
    packages=find_packages(where='src'),
    package_data={'dynid.model': ['data/*.yaml'], 'dynid.excite': ['data/*.yaml']},
    data_files=[
        ('share/ament_index/resource_index/packages', [os.path.join('resource', PACKAGE)]),
        (os.path.join('share', PACKAGE), ['package.xml']),
        (os.path.join('share', PACKAGE, 'launch'), glob(os.path.join('launch', '*.launch.py'))),
        (os.path.join('share', PACKAGE, 'config'), glob(os.path.join('config', '*.yaml'))),
    ],
    # The version ranges that hold: from the oldest tested (constraints-ubuntu-24.04.txt: Ubuntu 24.04's packages, and
    # for the others the oldest dynid supports) to the newest tested (requirements.txt), below the next major
    # release. colcon ignores these (package.xml's rosdep keys install the libraries); the console scripts setuptools
    # writes do not check them. ROS 2 (the nodes) comes from ROS or requirements.txt's wheels, never from here.
    install_requires=[
        'numpy>=1.26.4,<3', 'scipy>=1.11.4,<2', 'PyYAML>=6.0.1,<7', 'matplotlib>=3.6.3,<4', 'rosbags>=0.11.0',
        'numba>=0.58.1', 'threadpoolctl>=3.1.0,<4', 'setuptools',
    ],
    extras_require={
        # pinocchio from pip (ROS users have ROS's own: rosdep key pinocchio); its wheels ask numpy >= 2 of pip
        'pinocchio': ['pin>=4.1,<5'],
        'robots': ['example-robot-data>=4.4'],  # the built-ins ur5 and panda
        'physical': ['clarabel>=0.9', 'cvxpy>=1.6,<2'],  # dynid identify --physical (SCS through cvxpy)
        'mujoco': ['mujoco>=3.7,<5'],  # dynid export-mjcf, the MuJoCo plant
        'fleet': ['dask[distributed]>=2024.8', 'psycopg[binary]>=3.1.18,<4'],  # dynid batch, a PostgreSQL record
        'test': ['pytest>=8.3,<8.4', 'pytest-xdist>=3.8', 'hypothesis>=6.170', 'example-robot-data>=4.4',
                 'colcon-common-extensions>=0.3', 'linearmodels>=7.1'],
    },
    zip_safe=True,
    entry_points={
        'console_scripts': [
            'dynid = dynid.cli:main',
            'sim_node = dynid.ros.runner:sim_node',
            'excitation_node = dynid.ros.runner:excitation_node',
            'identifier_node = dynid.ros.runner:identifier_node',
            'estimator_node = dynid.ros.runner:estimator_node',
            'feedforward_node = dynid.ros.runner:feedforward_node',
            'contact_node = dynid.ros.runner:contact_node',
        ],
        # Feedforward terms (dynid.control.plugins): name = TermPlugin.
        'dynid.feedforward_terms': [
            'rigid_body = dynid.control.rigid_body:RIGID_BODY',
            'rotor_inertia = dynid.control.rigid_body:ROTOR_INERTIA',
            'friction_static = dynid.control.friction_static:FRICTION_STATIC',
            'friction_egms = dynid.control.friction_egms:FRICTION_EGMS',
            'friction_adaptive = dynid.control.friction_egms:FRICTION_ADAPTIVE',
            'flexible_joint = dynid.control.flexible_joint:FLEXIBLE_JOINT',
        ],
        # Identification methods (dynid.identify.methods): name = IdentificationMethod.
        'dynid.identification_methods': [
            'ols = dynid.identify.methods.ols:METHOD',
            'wls = dynid.identify.methods.wls:METHOD',
            'irls = dynid.identify.methods.irls:METHOD',
            'iirls = dynid.identify.methods.iirls:METHOD',
            'tls = dynid.identify.methods.tls:METHOD',
            'mls = dynid.identify.methods.mls:METHOD',
            'idim_iv = dynid.identify.methods.idim_iv:METHOD',
            'didim = dynid.identify.methods.didim:METHOD',
        ],
        # Friction laws of the identified model (dynid.friction.laws): name = FrictionLaw.
        'dynid.friction_laws': [
            'none = dynid.friction.laws:NONE',
            'viscous_coulomb = dynid.friction.laws:VISCOUS_COULOMB',
            'load_squared = dynid.friction.laws:LOAD_SQUARED',
            'load_absolute = dynid.friction.laws:LOAD_ABSOLUTE',
            'hamon = dynid.friction.laws:HAMON',
            'comprehensive = dynid.friction.laws:COMPREHENSIVE',
        ],
        # Kinds of file given as the prior (dynid.identify.solve.prior_source): name = PriorSourceKind.
        'dynid.prior_sources': [
            'result = dynid.identify.solve.prior_source:RESULT_PRIOR',
            'fleet = dynid.identify.solve.prior_source:FLEET_PRIOR',
        ],
    },
)
