"""`python -m wardian` runs the CLI."""

from wardian.cli.main import main

main()
