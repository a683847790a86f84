"""The experiments behind the docs: one results module per page, run from the repository root as
`python3 -m experiments.<module>` (each module's docstring gives its usage).

  cells, docgen, references   the library: the shared runner (`cells.sweep` runs every
                              `continuum compare` as a report of one grid), the generated blocks
                              of the docs, the references every table names
  <page>[_<part>]             the results modules of each page (docs/<page>.md):
                                allocation.md      allocation
                                aset-findings.md   aset_findings, aset_topologies
                                baselines.md       baselines, added_rule
                                deeprm.md          deeprm, deeprm_adapt, deeprm_figures, deeprm_pg
                                fleet.md           fleet
                                generalisation.md  generalisation
                                meta-results.md    meta_results, meta_results_labels, universal
                                oga.md             oga
                                performance.md     performance, performance_benches, instructions
                                scale-out.md       scale_out_herding, scale_out_ray
                                scaling.md         scaling, scaling_train
                                tail.md            tail
                                tapfinger.md       tapfinger, tapfinger_bench, tapfinger_jobs,
                                                   tapfinger_retrained
                                tuner.md           tuner, tuner_edgetuner, edgetuner_apex,
                                                   edgetuner_global, edgetuner_jobs
                              headline: the README's results table, from the pages' records
  checks                      check_docs (the generated blocks against their recorded outputs),
                              check_prose (every verdict word and ± in the docs recomputed from
                              the records) and check_data (the hand-written data files)
"""
