"""Checks of the repository's docs and data files: `python3 -m experiments.checks.check_docs`,
`python3 -m experiments.checks.check_data`."""
