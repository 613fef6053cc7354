from django.contrib import admin
from django.http import HttpResponse
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from django.views.i18n import JavaScriptCatalog
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("", include("annotation.home_urls")),
    path("healthz", healthz),
    path("favicon.ico", RedirectView.as_view(url=static("favicon.ico"), permanent=True)),
    path("accounts/", include("accounts.urls")),
    # The JavaScript translation catalog (gettext() and interpolate() in static/js), in the
    # request's language; served by the app itself, no CDN.
    path("i18n/js/", JavaScriptCatalog.as_view(packages=["accounts", "annotation", "ocr", "grading", "egress"]), name="javascript-catalog"),
    path("admin/", admin.site.urls),
    path("", include("annotation.urls")),
    path("ocr/", include("ocr.urls")),
    path("grading/", include("grading.urls")),
    path("grading/studies/", include("studies.urls")),  # the studies' pages kept at their URLs
    path("validity/", include("validity.urls")),
    path("provider-calls/", include("egress.urls")),
    path("api/", include("config.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start-up script as a file (no inline script for the CSP).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
]
