from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from evaluation.api.views import (
    LeaderboardIncidentsView,
    LeaderboardSeriesView,
    LeaderboardTrendsView,
    LeaderboardView,
)

urlpatterns: list[URLPattern | URLResolver] = [
    path("leaderboard", LeaderboardView.as_view(), name="leaderboard"),
    path("leaderboard/series", LeaderboardSeriesView.as_view(), name="leaderboard-series"),
    path("leaderboard/trends", LeaderboardTrendsView.as_view(), name="leaderboard-trends"),
    path("leaderboard/incidents", LeaderboardIncidentsView.as_view(), name="leaderboard-incidents"),
]
