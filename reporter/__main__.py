"""`python -m reporter` runs the command line."""

from reporter.cli import main

main()
