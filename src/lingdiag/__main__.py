"""``python -m lingdiag``: the command line, for environments without the console script."""

from lingdiag.cli import main

main()
