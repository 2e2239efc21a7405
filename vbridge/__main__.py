"""``python -m vbridge``: the ``vbridge`` command."""

import sys

from vbridge import cli

sys.exit(cli.main())
