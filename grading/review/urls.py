from django.urls import path
from django.views.generic import RedirectView

from . import views

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="grading:review_metrics", query_string=True), name="review_home"),
    path("metrics/", views.metrics_page, name="review_metrics"),
    path("metrics.csv", views.metrics_csv, name="review_metrics_csv"),
    path("disagreements/", views.disagreement_list, name="review_disagreements"),
    path("disagreements/<int:pk>/", views.disagreement_review, name="review_case"),
    path("prelabel/", views.start_prelabel, name="review_prelabel"),
    path("prelabel/<int:pk>/cancel/", views.cancel_prelabel, name="review_prelabel_cancel"),
    path("prelabel/<int:pk>/resume/", views.resume_prelabel, name="review_prelabel_resume"),
    path("categories/", views.category_page, name="review_categories"),
    path("compare/", views.compare_page, name="review_compare"),
    path("rubric/<int:question_pk>/", views.rubric_rejudge, name="review_rubric_rejudge"),
    path("validation/", views.validation_list, name="review_validation"),
    path("validation/report/", views.validation_report, name="review_validation_report"),
    path("validation/<int:pk>/", views.validation_case, name="review_validation_case"),
]
