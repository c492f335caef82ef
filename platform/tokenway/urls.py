"""URL map of the Django side. Each domain owns its own urls module.

``/api/v1/`` is the management API (DRF); ``/v1/`` never reaches Django (the ASGI
router sends it to the gateway).
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from tenants.invitation_page import invitation_page
from tokenway.metrics import metrics_view
from tokenway.views import favicon, healthz

api_v1 = [
    path("", include("tenants.urls")),
    path("", include("apikeys.urls")),
    path("", include("credentials.urls")),
    path("", include("catalog.urls")),
    path("", include("metering.urls")),
    path("", include("evaluation.urls")),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("favicon.ico", favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/v1/", include(api_v1)),
    path("accounts/invitations/<str:token>/", invitation_page, name="invitation"),  # a tenant's page
    path("accounts/", include("accounts.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("frontend.urls")),
]

handler400 = "foundation.api_errors.handler400"
handler404 = "foundation.api_errors.handler404"
handler500 = "foundation.api_errors.handler500"
