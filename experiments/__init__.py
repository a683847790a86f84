"""The experiments behind the docs: one results module per page, run from the repository root as
`python3 -m experiments.<module>` (each module's docstring gives its usage).

  cells, docgen, references   the library: the shared runner (`cells.sweep` runs every
                              `continuum compare` as a report of one grid), the generated blocks
                              of the docs, the references every table names
  <page>[_<part>]             the results module(s) of docs/<page>.md: allocation, aset_findings,
                              baselines, deeprm (and deeprm_adapt, deeprm_pg), fleet,
                              generalisation, meta_results (and meta_results_labels), oga,
                              performance (and performance_benches), scale_out_herding,
                              scale_out_ray, scaling (and scaling_train), tail, tapfinger (and
                              tapfinger_bench), tuner (and tuner_edgetuner); headline: README.md
  checks                      check_docs (the generated blocks against their recorded outputs)
                              and check_data (the hand-written data files)
"""
