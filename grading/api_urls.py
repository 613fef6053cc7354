from django.urls import include, path

urlpatterns = [
    path("", include("grading.judges.api_urls")),
    path("", include("grading.generation.api_urls")),
    path("", include("grading.review.api_urls")),
]
