"""Exit 1 unless this environment holds exactly the versions a constraints file names (each ``name==version`` line).

    python .ci/versions.py constraints-ubuntu-24.04.txt

pip's own check cannot say it: pinocchio's wheels ask numpy >= 2 of pip, which the environment of Ubuntu 24.04's
versions overrides on purpose (Makefile, test-ubuntu).
"""

import re
import sys
from importlib import metadata


def main(path: str) -> int:
    wrong = []
    for line in open(path, encoding='utf-8'):
        match = re.match(r'^([A-Za-z0-9_.\-]+)==(\S+)', line)
        if not match:
            continue
        name, wanted = match.groups()
        try:
            found = metadata.version(name)
        except metadata.PackageNotFoundError:
            found = 'not installed'
        if found != wanted:
            wrong.append(f'{name} {found} (wanted {wanted})')
        else:
            print(f'{name}=={found}')
    for text in wrong:
        print(f'{path}: {text}', file=sys.stderr)
    return 1 if wrong else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
