from django.urls import include, path

urlpatterns = [
    path("", include("grading.api_urls_judges")),
    path("", include("grading.api_urls_review")),
]
