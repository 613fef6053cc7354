"""Pages of labelling, assignment, agreement and adjudication (namespace `annotation`)."""
from django.urls import path

from . import views

urlpatterns = [
    path("label/", views.label_queue, name="label_queue"),
    path("label/next/", views.label_next, name="label_next"),
    path("label/<int:pk>/", views.label_response, name="label"),
    path("label/question/<int:pk>/", views.label_question, name="label_question"),
    path("label/<int:pk>/history/", views.label_history, name="label_history"),
    path("assign/", views.assign, name="assign"),
    path("agreement/", views.agreement, name="agreement"),
    path("adjudication/", views.adjudication_queue, name="adjudication_queue"),
    path("adjudication/<int:pk>/", views.adjudicate, name="adjudicate"),
    path("exams/<int:pk>/anchoring/", views.exam_anchoring, name="exam_anchoring"),
]
