"""Pages of the judges, under /grading/judges/ (namespace `grading`)."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.judges_home, name="judges_home"),
    path("settings/new/", views.setting_create, name="judge_setting_create"),
    path("settings/<int:pk>/", views.setting_detail, name="judge_setting_detail"),
    path("settings/<int:pk>/edit/", views.setting_edit, name="judge_setting_edit"),
    path("endpoints/new/", views.endpoint_edit, name="judge_endpoint_create"),
    path("endpoints/<int:pk>/edit/", views.endpoint_edit, name="judge_endpoint_edit"),
    path("endpoints/<int:pk>/test/", views.endpoint_test, name="judge_endpoint_test"),
    path("runs/", views.run_list, name="judge_run_list"),
    path("runs/new/", views.run_start, name="judge_run_start"),
    path("runs/estimate.json", views.run_estimate, name="judge_run_estimate"),
    path("runs/<int:pk>/", views.run_detail, name="judge_run_detail"),
    path("runs/<int:pk>/progress.json", views.JUDGE_RUN_ACTIONS.progress, name="judge_run_progress"),
    path("runs/<int:pk>/cancel/", views.JUDGE_RUN_ACTIONS.cancel, name="judge_run_cancel"),
    path("runs/<int:pk>/resume/", views.JUDGE_RUN_ACTIONS.resume, name="judge_run_resume"),
    path("results/<int:pk>/", views.result_detail, name="judge_result_detail"),
    path("prompt-sets/", views.prompt_sets, name="prompt_sets"),
]
