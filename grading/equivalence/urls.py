"""The answer-check page, under /grading/equivalence/ (namespace `grading`)."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.answer_check, name="equivalence"),
]
