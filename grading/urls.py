from django.urls import include, path

from grading.judges import answer_check

app_name = "grading"
urlpatterns = [
    path("equivalence/", answer_check.answer_check, name="equivalence"),
    path("judges/", include("grading.judges.urls")),
    path("judges/", include("grading.generation.urls")),
    path("review/", include("grading.review.urls")),
    path("report/", include("grading.report.urls")),
]
