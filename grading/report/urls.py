from django.urls import path

from . import views

urlpatterns = [
    path("", views.methods_report, name="methods_report"),
]
