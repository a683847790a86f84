"""continuum on Ray: sweeps, meta-training and Ape-X's actors spread over a Ray cluster.

The driver (this package, `python -m continuum_ray`) asks the `continuum` binary for the work
(`continuum sweep plan`, `continuum meta-train --plan`, `continuum train --apex-learner`), ships
each unit to a Ray task that runs the binary (`continuum sweep cell`, `continuum meta-train
--inner`, `continuum train --apex-actor`), gathers what the tasks print or write, and hands it
back to the binary to merge or learn from. Every number is computed by the binary, so a
run on Ray gives the same reports and checkpoints as the same run on one machine.
"""

__version__ = "0.1.0"
