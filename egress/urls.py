from django.urls import path

from . import views

app_name = "egress"
urlpatterns = [
    path("", views.call_log, name="call_log"),
    path("export.json", views.call_log_export, name="call_log_export"),
]
