"""``python -m unison.bench``: the same as ``unison bench``."""

import sys

from unison.bench.cli import main

sys.exit(main())
