"""A URDF with identified dynamics written in: link inertials, joint friction and damping, rotor inertia noted.

Input: a physically consistent identification (the ``physical`` section of a result, whose standard
parameters are realizable bodies; :mod:`dynid.identify.solve.physical`) and the URDF of the same robot.

- **Inertials.** Each identified body is the child link of its joint, expressed in that link's frame
  (which is the joint frame in URDF). It is written as ``<inertial>``: the mass [kg], ``<origin xyz>``
  the centre of mass [m], ``<inertia>`` about the centre of mass [kg·m²] in the link's axes (``rpy`` 0).
  The identified body is everything the joint moves up to the next identified joint: links attached
  through fixed joints (flanges, tools, a hand) and through joints the model locked (fingers) cannot be
  told apart from the link by the torques. Their inertials are removed and a comment names the link
  whose inertial holds them, so that the file describes the identified robot exactly.
- **Friction.** ``<dynamics friction="Fc" damping="Fv"/>`` on each identified joint (Coulomb [N·m],
  viscous [N·m·s/rad], the identification's friction velocity; a ``tau0`` offset has no URDF field, nor has the
  Stribeck excess the model choice may keep, Fs·sgn(ω)·exp(−(|ω|/Vs)^μ): it is left out, its values written as a
  comment in the joint). Fc and Fv are the law's Coulomb level at ω → 0 and viscous coefficient as its roles give
  them (:meth:`IdentificationResult.coulomb_viscous`, whatever the law names its symbols; Li et al.'s comprehensive
  law: fc − fv·v_s and fv where the joint's exponent is 1); a power of the speed (an exponent other than 1) has no URDF
  field either: left out, written as a comment. A law whose roles have no Coulomb level or no viscous coefficient
  leaves that friction out, and a comment names the law and its parameters (:func:`friction_not_held`); a law
  physical identification does not take is refused by name. Where the result was identified
  with coupled drives (θ = C·q: its friction is the motors'), a motor's friction is its joint's where the motor turns
  that joint alone (θ_k = ±q_k; Coulomb and viscous friction are
  odd in the velocity, so the sign does not matter), a joint's own friction (``Fcq``, ``Fvq``:
  :mod:`dynid.identify.equations.joint_side`) is added to its joint's, and the friction of a motor that turns several
  joints has no joint to go on: it is left out and named in a comment (:func:`joint_friction_table`).
- **Rotor inertia.** URDF has no field for it; where identified it is written as a comment in the joint
  (reflected to the link side [kg·m²]: simulators add it as armature).

The check that the written file gives the result's torques is
:func:`dynid.identify.result.torque.round_trip_error` (it needs the identification's base model).

The identified link may also be a link the joint's child carries through fixed joints (dynid's URDF of a
standard-DH robot: joint i moves ``<joint>_axis``, the joint frame, which carries ``<joint>_link``); the
identified body is about the joint frame, so it goes on the child either way.

A URDF whose joints are not the result's, or whose joints do not move the links the result identified, is
refused (:class:`~dynid.errors.InputError`, one line).
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np

from dynid.errors import InputError
from dynid.friction.laws import physical_laws
from dynid.identify.equations.joint_side import JOINT_SIDE_ROLES, JOINT_SIDE_SYMBOLS
from dynid.identify.result.result import IdentificationResult
from dynid.model.inertial import describe_link


def _format(value: float) -> str:
    return f'{float(value):.10g}'


def _read(urdf: str | Path) -> ElementTree.ElementTree:
    try:
        parser = ElementTree.XMLParser(target=ElementTree.TreeBuilder(insert_comments=True))  # keep its comments
        return ElementTree.parse(urdf, parser)
    except (OSError, ElementTree.ParseError) as error:
        raise InputError(f'cannot read URDF {urdf}: {error}') from None


def _merged_links(joints: dict, start: str, identified: set[str]) -> list[str]:
    """Links rigidly carried with ``start``: reached through joints that are not identified."""
    found, stack = [], [start]
    while stack:
        link = stack.pop()
        for joint in joints.values():
            if joint.find('parent').get('link') == link and joint.get('name') not in identified:
                child = joint.find('child').get('link')
                found.append(child)
                stack.append(child)
    return found


def _set_inertial(link: ElementTree.Element, phi: np.ndarray) -> None:
    body = describe_link(phi)
    for old in link.findall('inertial'):
        link.remove(old)
    inertial = ElementTree.Element('inertial')
    ElementTree.SubElement(inertial, 'origin', xyz=' '.join(_format(v) for v in body['com']), rpy='0 0 0')
    ElementTree.SubElement(inertial, 'mass', value=_format(body['mass']))
    i = body['inertia_com']
    ElementTree.SubElement(inertial, 'inertia', ixx=_format(i[0, 0]), ixy=_format(i[0, 1]), ixz=_format(i[0, 2]),
                           iyy=_format(i[1, 1]), iyz=_format(i[1, 2]), izz=_format(i[2, 2]))
    link.insert(0, inertial)
    link.insert(0, ElementTree.Comment(' dynid: identified inertial (physically consistent identification) '))


def joint_friction_table(result: IdentificationResult) -> tuple[dict[str, dict[str, float]], list[str]]:
    """({joint: {symbol: value}} the result's friction as a simulator's joints hold it, the parameters of motors
    that turn several joints, left out) (module docstring): per joint its Coulomb level ``Fc`` and viscous coefficient
    ``Fv`` as the law's roles give them (:meth:`IdentificationResult.coulomb_viscous`), beside the law's other
    parameters under their own names (no joint field holds them: an offset, a load term, the viscous power term of an
    exponent other than 1); with coupled drives, a joint's own friction (``Fcq``, ``Fvq``) added to its levels."""
    law, exponents, levels = _named_apart(result.law), result.power_exponents(), result.coulomb_viscous()
    table, parameters = {}, result.friction()
    for k, (joint, values) in enumerate(parameters.items()):
        held = set(law.level_symbols(exponents[k]).values())
        table[joint] = {**levels[joint], **{s: v for s, v in values.items() if s not in held}}
    coupling = result.recorded_coupling()
    if coupling is None:
        return table, []
    out, left = {}, []
    for k, joint in enumerate(result.joint_names):
        own = {part: table[joint].pop(symbol, 0.0) for part, symbol in JOINT_SIDE_ROLES.items()}
        alone = np.count_nonzero(coupling[k]) == 1 and coupling[k, k] != 0
        out[joint] = table[joint] if alone else {}
        if not alone:
            left += [f'{symbol}_{k + 1}' for symbol, value in parameters[joint].items()
                     if value != 0.0 and symbol not in JOINT_SIDE_SYMBOLS]
        for part, value in own.items():
            if value != 0.0:
                out[joint][part] = out[joint].get(part, 0.0) + value
    return out, left


def _named_apart(law):
    """``law``, refused (InputError naming it) where a parameter it leaves under its own name would read as a level:
    a symbol Fc or Fv that is not the Coulomb level or the linear viscous coefficient of its roles."""
    clash = [s for s in ('Fc', 'Fv') if s in law.symbols and (law.roles.get(s) != s or s == 'Fv' and law.power_viscous)]
    if clash:
        roles = ', '.join(f'{part}: {symbol}' for part, symbol in law.roles.items()) or 'none'
        raise InputError(f'friction law {law.name!r}: its parameters {clash} are not its Coulomb level and linear '
                         f'viscous coefficient (its roles: {roles}), which a joint holds under those names: give the '
                         f'law those roles or other symbols to export it')
    return law


def friction_not_held(result: IdentificationResult) -> str:
    """The sentence naming the result's friction law and the parameters no joint holds where the law's roles have no
    Coulomb level or no viscous coefficient (:meth:`FrictionLaw.level_symbols`; a law without roles has neither), ''
    where they have both or every parameter left out is 0: what the exports write as a comment and the CLI prints."""
    law, exponents = result.law, result.power_exponents()
    missing = [text for part, text in (('Fc', 'Coulomb level'), ('Fv', 'viscous coefficient')) if part not in law.roles]
    left = [f'{symbol}_{k + 1}' for k, values in enumerate(result.friction().values())
            for symbol, value in values.items() if missing and symbol in law.symbols and value != 0.0
            and symbol not in law.level_symbols(exponents[k]).values()]
    if not left:
        return ''
    roles = ', '.join(f'{part}: {symbol}' for part, symbol in law.roles.items()) or 'none'
    return (f'friction law {law.name!r} has no {" or ".join(missing)} a joint holds (its roles: {roles}), left out: '
            f'{", ".join(left)}')


def physical_section(result: IdentificationResult) -> dict:
    """The result's ``physical`` section, what the exports write; InputError where it has none, naming its friction
    law where physical identification does not take it (identifying with ``physical`` again would not help)."""
    if result.physical_section is not None:
        return result.physical_section
    if not result.law.physical:
        raise InputError(f'the result has no physically consistent standard parameters: its friction law '
                         f'{result.law.name!r} is not one physical identification takes ({", ".join(physical_laws())}'
                         f'); identify with one of those and {{physical}}', fields=('physical',))
    raise InputError('the result has no physically consistent standard parameters (identify with {physical})',
                     fields=('physical',))


def export_urdf(result: IdentificationResult, urdf, label: str | None = None) -> str:
    """The URDF text of ``urdf`` (a path or a file object) with the identified dynamics of ``result`` (module
    docstring); ``label`` names it in errors (default: the path)."""
    section = physical_section(result)
    tree = _read(urdf)
    urdf = urdf if label is None else label
    root = tree.getroot()
    links = {link.get('name'): link for link in root.findall('link')}
    joints = {joint.get('name'): joint for joint in root.findall('joint')}
    missing = [name for name in result.joint_names if name not in joints]
    if missing:
        raise InputError(f'{urdf} has no joints {missing} of the result (robot {result.robot!r})')
    identified = set(result.joint_names)
    friction, left = joint_friction_table(result)
    exponents, power = result.power_exponents(), result.law.roles.get('Fv') if result.law.power_viscous else None
    rotor = section.get('rotor_inertia') or {}
    for entry in section['links']:
        joint = joints[entry['joint']]
        child = joint.find('child').get('link')
        merged = _merged_links(joints, child, identified)
        if child != entry['link'] and entry['link'] not in merged:
            raise InputError(f'{urdf}: joint {entry["joint"]!r} moves link {child!r}, the result identified '
                             f'{entry["link"]!r}')
        _set_inertial(links[child], np.asarray(entry['parameters'], dtype=float))
        for carried in merged:
            for old in links[carried].findall('inertial'):
                links[carried].remove(old)
            links[carried].insert(0, ElementTree.Comment(f' dynid: inertial removed, held by the identified '
                                                        f'inertial of {child} '))
        values = friction.get(entry['joint'], {})
        for old in joint.findall('dynamics'):
            joint.remove(old)
        if 'Fc' in values or 'Fv' in values:
            ElementTree.SubElement(joint, 'dynamics', friction=_format(values.get('Fc', 0.0)),
                                   damping=_format(values.get('Fv', 0.0)))
        k = result.joint_names.index(entry['joint'])
        if power and values.get(power):
            joint.append(ElementTree.Comment(f' dynid: viscous power term left out (no URDF field): {power} '
                                             f'{_format(values[power])}, exponent {_format(exponents[k])} '))
        if values.get('Fs'):
            stribeck = result.stribeck
            joint.append(ElementTree.Comment(f' dynid: Stribeck excess left out (no URDF field): Fs '
                                             f'{_format(values["Fs"])} N*m, Vs {_format(stribeck.velocities[k])} '
                                             f'rad/s, shape {_format(stribeck.shapes[k])} '))
        if entry['joint'] in rotor:
            joint.append(ElementTree.Comment(f' dynid: identified rotor inertia (link side) '
                                             f'{_format(rotor[entry["joint"]])} kg*m^2 '))
    note = friction_not_held(result)
    if note:
        root.insert(0, ElementTree.Comment(f' dynid: {note} '))
    if left:
        root.insert(0, ElementTree.Comment(f' dynid: friction of motors that turn several joints (coupled drives) '
                                           f'left out, no joint holds it: {", ".join(left)} '))
    root.insert(0, ElementTree.Comment(f' dynid: dynamics identified for robot {result.robot} '
                                       f'({result.method}, physical) '))
    ElementTree.indent(tree)
    return ElementTree.tostring(root, encoding='unicode') + '\n'
