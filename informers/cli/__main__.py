"""``python -m informers.cli``: the ``kube-informers`` command."""

import sys

from informers.cli import main

sys.exit(main())
