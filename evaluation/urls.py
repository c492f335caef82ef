from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from evaluation.api.views import LeaderboardSeriesView, LeaderboardView

urlpatterns: list[URLPattern | URLResolver] = [
    path("leaderboard", LeaderboardView.as_view(), name="leaderboard"),
    path("leaderboard/series", LeaderboardSeriesView.as_view(), name="leaderboard-series"),
]
