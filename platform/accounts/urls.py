from __future__ import annotations

from django.contrib.auth import views as auth
from django.urls import path, reverse_lazy

from accounts import views

T = "accounts/"

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", auth.LoginView.as_view(template_name=T + "login.html"), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path(
        "password/change/",
        auth.PasswordChangeView.as_view(
            template_name=T + "form.html", success_url=reverse_lazy("password_change_done")
        ),
        name="password_change",
    ),
    path(
        "password/change/done/",
        auth.PasswordChangeDoneView.as_view(template_name=T + "message.html"),
        name="password_change_done",
    ),
    path(
        "password/reset/",
        auth.PasswordResetView.as_view(
            template_name=T + "form.html",
            email_template_name=T + "password_reset_email.txt",
            subject_template_name=T + "password_reset_subject.txt",
        ),
        name="password_reset",
    ),
    path(
        "password/reset/sent/",
        auth.PasswordResetDoneView.as_view(template_name=T + "message.html"),
        name="password_reset_done",
    ),
    path(
        "password/reset/<uidb64>/<token>/",
        auth.PasswordResetConfirmView.as_view(template_name=T + "form.html"),
        name="password_reset_confirm",
    ),
    path(
        "password/reset/complete/",
        auth.PasswordResetCompleteView.as_view(template_name=T + "message.html"),
        name="password_reset_complete",
    ),
]
