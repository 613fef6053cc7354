from django.urls import path

from . import views

app_name = "validity"
urlpatterns = [
    path("", views.validity_page, name="page"),
    path("assign/", views.validity_assign, name="assign"),
]
