from django.contrib import admin
from django.http import HttpResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from annotation.views import home


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("", home, name="home"),
    path("healthz", healthz),
    path("accounts/", include("accounts.urls")),
    path("admin/", admin.site.urls),
    path("", include("annotation.urls")),
    path("ocr/", include("ocr.urls")),
    path("grading/", include("grading.urls")),
    path("api/", include("config.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
