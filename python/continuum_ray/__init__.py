"""continuum on Ray: sweeps and meta-training spread over a Ray cluster.

The driver (this package, `python -m continuum_ray`) asks the `continuum` binary for the work
(`continuum sweep plan`, `continuum meta-train --plan`), ships each unit to a Ray task that runs
the binary (`continuum sweep cell`, `continuum meta-train --inner`), gathers what the tasks
print, and hands it back to the binary to merge. Every number is computed by the binary, so a
run on Ray gives the same reports and checkpoints as the same run on one machine.
"""

__version__ = "0.1.0"
