from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

from . import views

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password/", views.PasswordChangeView.as_view(), name="password_change"),
    path("language/", views.set_language, name="set_language"),
    path("profile/", views.profile, name="profile"),
    # The token page's first address (issue 28): the token is a part of the profile page now.
    path("token/", RedirectView.as_view(pattern_name="profile", query_string=True), name="api_token"),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
]
