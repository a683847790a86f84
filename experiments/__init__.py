"""The experiments behind the docs: the results modules, one or more per page, each run from the
repository root as `python3 -m experiments.<module>` (its docstring gives its usage and names the
page it feeds). Importing a module runs nothing: each has a `main(argv=None)`, run by
`python3 -m`, and its command line is built on experiments/cli.py's shared flags.

The modules stay flat (one name each, grouped by page below): a page's generated blocks, the
README and the docs name them as `experiments.<module>`, and those names are the records' keys
(docs/generated/<module>...).

  the library
    cells         the shared runner: `cells.sweep` runs every `continuum compare` as a report
                  of one grid; load options, summary rows, `mean ± sd`
    cli           the shared command line: `--bin`, `--seeds`, `--duration`, `--out`,
                  `--threads`, `--reuse`, `--ray`, `--publish`, `--from-json`
    docgen        the generated blocks of the docs and their records in docs/generated/
    references    the references every table names (best heuristic, bound, verdict rule)

  the results modules, by the page they feed (page: modules; a module in brackets is quoted
  there from another page's records, or named in the prose without a block of its own)
    README.md               headline (the results table, from the pages' records)
    docs/allocation.md      allocation
    docs/aset-findings.md   aset_findings, aset_topologies, meta_results
    docs/baselines.md       baselines, added_rule
    docs/deeprm.md          deeprm, deeprm_adapt, deeprm_pg, deeprm_figures (deeprm's figures)
    docs/fleet.md           fleet
    docs/generalisation.md  generalisation
    docs/live.md            live_fleet (the learned default on a live fleet)
    docs/meta-results.md    meta_results, meta_results_labels, universal, generalisation
    docs/oga.md             oga
    docs/performance.md     performance, instructions, performance_benches (by hand),
                            [scaling_train]
    docs/results.md         [allocation, meta_results, oga] (excerpts)
    docs/scale-out.md       scale_out_herding, scale_out_ray (no block), [fleet] (excerpts)
    docs/scaling.md         scaling, scaling_train (no block)
    docs/tail.md            tail
    docs/tapfinger.md       tapfinger, tapfinger_bench, tapfinger_jobs, tapfinger_retrained
    docs/tuner.md           tuner, tuner_edgetuner, edgetuner_apex, edgetuner_global,
                            edgetuner_jobs

  the same, by module
    added_rule baselines.md · allocation allocation.md · aset_findings aset-findings.md ·
    aset_topologies aset-findings.md · baselines baselines.md · deeprm deeprm.md ·
    deeprm_adapt deeprm.md · deeprm_figures deeprm.md (a library of deeprm) · deeprm_pg deeprm.md
    · edgetuner_apex tuner.md · edgetuner_global tuner.md · edgetuner_jobs tuner.md ·
    fleet fleet.md · generalisation generalisation.md, meta-results.md · headline README.md ·
    instructions performance.md · live_fleet live.md · meta_results meta-results.md, aset-findings.md ·
    meta_results_labels meta-results.md · oga oga.md · performance performance.md ·
    performance_benches performance.md · scale_out_herding scale-out.md ·
    scale_out_ray scale-out.md · scaling scaling.md · scaling_train scaling.md · tail tail.md ·
    tapfinger tapfinger.md · tapfinger_bench tapfinger.md · tapfinger_jobs tapfinger.md ·
    tapfinger_retrained tapfinger.md · tuner tuner.md · tuner_edgetuner tuner.md ·
    universal meta-results.md

  checks          check_docs (the generated blocks against their recorded outputs; --rerender
                  runs every module a block names with --from-json), check_prose (every verdict
                  word and ± in the docs recomputed from the records) and check_data (the
                  hand-written data files)
"""
