"""The REST API: each app owns its routes under /api/."""
from django.urls import include, path

urlpatterns = [
    path("", include("annotation.api_urls")),
    path("", include("ocr.api_urls")),
    path("", include("grading.api_urls")),
    path("", include("studies.api_urls")),
]
