"""`python -m wardian` runs the CLI (hot path first, `wardian.cli.hot`)."""

from wardian.cli.hot import main

main()
