"""Reads of evaluation's statistics, one module per audience, each returning typed rows:

- ``leaderboard``: the leaderboard table (API and page), its metric names, minimum n and windows;
- ``trends``: a metric over time per offering, from the rollups;
- ``incidents``: change-point incidents;
- ``ops``: what the operators watch about probing (coverage per region, what probing costs).

Rows that go out as JSON have ``as_json()``, which gives the documented wire shape. Other apps import
from ``evaluation.selectors``; every name is re-exported here.
"""

from __future__ import annotations

from evaluation.selectors.incidents import IncidentRow as IncidentRow
from evaluation.selectors.incidents import incidents_list as incidents_list
from evaluation.selectors.leaderboard import DEFAULT_SORT as DEFAULT_SORT
from evaluation.selectors.leaderboard import FLAGS as FLAGS
from evaluation.selectors.leaderboard import METRICS as METRICS
from evaluation.selectors.leaderboard import MIN_N as MIN_N
from evaluation.selectors.leaderboard import SORT_KEYS as SORT_KEYS
from evaluation.selectors.leaderboard import WINDOWS as WINDOWS
from evaluation.selectors.leaderboard import LeaderboardRow as LeaderboardRow
from evaluation.selectors.leaderboard import MetricFigure as MetricFigure
from evaluation.selectors.leaderboard import RegionFigures as RegionFigures
from evaluation.selectors.leaderboard import leaderboard_rows as leaderboard_rows
from evaluation.selectors.leaderboard import leaderboard_window as leaderboard_window
from evaluation.selectors.ops import COVERAGE_WINDOW as COVERAGE_WINDOW
from evaluation.selectors.ops import ProbeSpend as ProbeSpend
from evaluation.selectors.ops import RegionCoverage as RegionCoverage
from evaluation.selectors.ops import probe_coverage as probe_coverage
from evaluation.selectors.ops import probe_spend as probe_spend
from evaluation.selectors.trends import SERIES_BUCKET as SERIES_BUCKET
from evaluation.selectors.trends import TrendPoint as TrendPoint
from evaluation.selectors.trends import offering_series as offering_series
from evaluation.selectors.trends import offering_trends as offering_trends
