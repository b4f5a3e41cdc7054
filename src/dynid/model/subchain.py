"""One serial chain of a description that branches: the joints to keep, in chain order, and the chains there are.

A mobile manipulator's description (a torso, an arm, a head, a gripper) is a tree of joints; dynid models one
serial chain of it, e.g. the arm (``--joints``), with the other joints locked (:meth:`RobotModel.from_urdf`).
:func:`serial_chains` lists the tree's root-to-leaf chains of movable joints (for messages), and
:func:`chain_order` checks that the joints given lie on one of them and puts them in chain order, whatever
order they were given in. Locked joints between kept ones are allowed: a locked joint of the chain becomes a
fixed transform (e.g. an arm given without the torso it stands on).
"""

from __future__ import annotations

from collections.abc import Sequence

import pinocchio as pin

from dynid.errors import InputError


def serial_chains(model: pin.Model) -> list[tuple[str, ...]]:
    """The root-to-leaf chains of ``model``'s joints (names, root first), one per joint without children."""
    children = {i: [] for i in range(model.njoints)}
    for i in range(1, model.njoints):
        children[model.parents[i]].append(i)
    chains = []
    for leaf in (i for i in range(1, model.njoints) if not children[i]):
        path, joint = [], leaf
        while joint > 0:
            path.append(model.names[joint])
            joint = model.parents[joint]
        chains.append(tuple(reversed(path)))
    return chains


def chains_text(model: pin.Model) -> str:
    """'[torso_lift_joint, arm_1_joint … arm_7_joint], [torso_lift_joint, head_1_joint, head_2_joint]'."""
    def short(chain):
        return ', '.join(chain) if len(chain) <= 4 else f'{", ".join(chain[:2])} … {chain[-1]}'
    return '; '.join(f'[{short(chain)}]' for chain in serial_chains(model))


def chain_order(model: pin.Model, joints: Sequence[str], source: str = 'the description') -> list[str]:
    """``joints`` in the order of the one chain of ``model`` they lie on (root first).

    Raises InputError naming joints ``model`` does not have, or joints on different branches (with the chains).
    """
    names = list(model.names)
    unknown = [j for j in joints if j not in names[1:]]
    if unknown:
        raise InputError(f'joints {unknown} are not in {source}; it has {names[1:]}')
    if len(set(joints)) != len(joints):
        raise InputError(f'joints {list(joints)} name a joint twice')
    wanted = set(joints)
    for chain in serial_chains(model):
        if wanted <= set(chain):
            return [name for name in chain if name in wanted]
    raise InputError(f'joints {list(joints)} are not on one serial chain of {source}; its chains: '
                     f'{chains_text(model)}')
