from django.urls import path
from django.views.generic import RedirectView

from . import views

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="grading:review_metrics", query_string=True), name="review_home"),
    path("metrics/", views.metrics_page, name="review_metrics"),
    path("metrics.csv", views.metrics_csv, name="review_metrics_csv"),
    path("disagreements/", views.disagreement_list, name="review_disagreements"),
    path("disagreements/<int:pk>/", views.disagreement_review, name="review_case"),
    path("meta-eval-runs/", views.start_meta_eval_run, name="review_meta_eval_run_start"),
    path("meta-eval-runs/<int:pk>/progress.json", views.META_EVAL_RUN_ACTIONS.progress,
         name="review_meta_eval_run_progress"),
    path("meta-eval-runs/<int:pk>/cancel/", views.META_EVAL_RUN_ACTIONS.cancel, name="review_meta_eval_run_cancel"),
    path("meta-eval-runs/<int:pk>/resume/", views.META_EVAL_RUN_ACTIONS.resume, name="review_meta_eval_run_resume"),
    # The old addresses, from when pages called the meta-evaluation run "prelabel" (308: a form posts again).
    path("prelabel/", views.moved_permanently("grading:review_meta_eval_run_start")),
    path("prelabel/<int:pk>/cancel/", views.moved_permanently("grading:review_meta_eval_run_cancel")),
    path("prelabel/<int:pk>/resume/", views.moved_permanently("grading:review_meta_eval_run_resume")),
    path("categories/", views.category_page, name="review_categories"),
    path("compare/", views.compare_page, name="review_compare"),
    path("rubric/<int:question_pk>/", views.rubric_rejudge, name="review_rubric_rejudge"),
    path("validation/", views.validation_list, name="review_validation"),
    path("validation/report/", views.validation_report, name="review_validation_report"),
    path("validation/<int:pk>/", views.validation_case, name="review_validation_case"),
]
