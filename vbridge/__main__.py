"""``python -m vbridge``: the ``vbridge`` command."""

import sys

from vbridge import cli

if __name__ == "__main__":  # importing the module (pkgutil walks, docs) runs nothing
    sys.exit(cli.main())
