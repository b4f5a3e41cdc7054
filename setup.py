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
    # Runtime libraries come from requirements.txt (pip) or rosdep keys in package.xml (colcon);
    # listing them here would make the setuptools-generated ROS scripts check pip metadata.
    install_requires=['setuptools'],
    extras_require={'test': ['pytest', 'example-robot-data']},
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
        # Feedforward terms (dynid.control.plugins): name = factory(robot, result, options).
        'dynid.feedforward_terms': [
            'rigid_body = dynid.control.rigid_body:RigidBodyTerm.from_result',
            'rotor_inertia = dynid.control.rigid_body:RotorInertiaTerm.from_result',
            'friction_static = dynid.control.friction_static:StaticFrictionTerm.from_result',
            'friction_egms = dynid.control.friction_egms:EGMSFrictionTerm.from_result',
            'friction_adaptive = dynid.control.friction_egms:AdaptiveFrictionTerm.from_result',
            'flexible_joint = dynid.control.flexible_joint:FlexibleJointTerm.from_result',
        ],
    },
)
