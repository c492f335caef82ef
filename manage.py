#!/usr/bin/env python
"""Django's command-line utility for Tokenway."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
# platform/ is a plain folder (not a package) so that `import platform` stays the stdlib module.
for entry in (str(ROOT), str(ROOT / "platform")):
    if entry not in sys.path:
        sys.path.append(entry)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokenway.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
