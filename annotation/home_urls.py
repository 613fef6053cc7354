"""The site's home page (the dataset's counts, then each app's part: templates/home_apps.html), at
the root and outside the `annotation` namespace: every page links to it as {% url "home" %}."""
from django.urls import path

from .views import home

urlpatterns = [
    path("", home, name="home"),
]
