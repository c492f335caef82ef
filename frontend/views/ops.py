"""Operators' billing dashboard: staff only (others get 404, anonymous users the login page)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from frontend.data.ops import dashboard

DASHBOARD_DAYS = 30


@login_required
def billing_dashboard(request: HttpRequest) -> HttpResponse:
    if not request.user.is_staff:
        raise Http404("not found")
    return render(
        request, "frontend/ops/billing.html", {"section": "ops", "d": dashboard(DASHBOARD_DAYS), "days": DASHBOARD_DAYS}
    )
