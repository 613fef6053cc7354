"""Pages of generation runs, under /grading/judges/generation/ (namespace `grading`; their addresses
and names are those they had among the judges' pages)."""
from django.urls import path

from . import views

urlpatterns = [
    path("generation/", views.generation_list, name="judge_generation_list"),
    path("generation/new/", views.generation_start, name="judge_generation_start"),
    path("generation/<int:pk>/", views.generation_detail, name="judge_generation_detail"),
    path("generation/<int:pk>/progress.json", views.GENERATION_RUN_ACTIONS.progress, name="judge_generation_progress"),
    path("generation/<int:pk>/cancel/", views.GENERATION_RUN_ACTIONS.cancel, name="judge_generation_cancel"),
    path("generation/<int:pk>/resume/", views.GENERATION_RUN_ACTIONS.resume, name="judge_generation_resume"),
]
