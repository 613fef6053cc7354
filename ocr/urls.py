from django.urls import path

app_name = "ocr"
urlpatterns = []
