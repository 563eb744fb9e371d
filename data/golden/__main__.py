"""``python -m data.golden``: regenerate tests/envs/reports/golden/ (see data/golden/__init__.py)."""

import sys

from data.golden.run import main

sys.exit(main())
