"""``python -m dynid.cli``: the ``dynid`` command."""

import sys

from dynid.cli import main

sys.exit(main())
