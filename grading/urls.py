from django.urls import include, path

app_name = "grading"
urlpatterns = [
    path("equivalence/", include("grading.urls_equivalence")),
    path("judges/", include("grading.urls_judges")),
    path("review/", include("grading.urls_review")),
]
