from django.urls import path

from . import views

app_name = "ocr"
urlpatterns = [
    path("", views.batch_list, name="batch_list"),
    path("class/", views.class_upload, name="class_upload"),
    path("class/kept/<int:pk>/", views.class_pending, name="class_pending"),
    path("class/kept/<int:pk>/discard/", views.class_pending_discard, name="class_pending_discard"),
    path("batches/<int:pk>/", views.batch_detail, name="batch_detail"),
    path("batches/<int:pk>/files/", views.batch_add_files, name="batch_add_files"),
    path("batches/<int:pk>/assign/", views.batch_assign, name="batch_assign"),
    path("batches/<int:pk>/engine/", views.batch_run_engine, name="batch_run_engine"),
    path("batches/<int:pk>/retry/", views.batch_retry, name="batch_retry"),
    path("batches/<int:pk>/labels/", views.batch_assign_labels, name="batch_assign_labels"),
    path("batches/<int:pk>/packets/", views.batch_packets, name="batch_packets"),
    path("batches/<int:pk>/packets/fix/", views.batch_packets_fix, name="batch_packets_fix"),
    path("batches/<int:pk>/progress.json", views.batch_progress, name="batch_progress"),
    path("pages/<int:pk>/", views.page_correct, name="page_correct"),
    path("pages/<int:pk>/history/", views.page_history, name="page_history"),
    path("pages/<int:pk>/image/<str:kind>/", views.page_image, name="page_image"),
    path("responses/<int:pk>/flag/", views.flag_transcript, name="flag_transcript"),
    path("quality/", views.quality, name="quality"),
]
