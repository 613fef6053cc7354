from django.urls import include, path

app_name = "grading"
urlpatterns = [
    path("equivalence/", include("grading.equivalence.urls")),
    path("judges/", include("grading.judges.urls")),
    path("review/", include("grading.review.urls")),
    path("report/", include("grading.report.urls")),
    path("studies/", include("grading.studies.urls")),
]
