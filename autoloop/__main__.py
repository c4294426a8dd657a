"""``python -m autoloop``: the command line (see `autoloop.cli`)."""

import sys

from autoloop.cli import main

sys.exit(main())
