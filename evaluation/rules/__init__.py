"""Probe metric rules, each defined once (``definitions``) and evaluated three ways from that
definition: over raw probe rows (``from_rows``), over rollup counters (``from_counts``) and as the
SQL that builds those counters (``sql``). ``tests/evaluation/test_rules_agree.py`` holds them equal."""
