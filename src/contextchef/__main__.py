"""`python -m contextchef` runs the command-line interface."""

from contextchef.cli import main

main()
