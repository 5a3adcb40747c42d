from django.contrib.auth import views as auth_views
from django.urls import include, path
from oauth2_provider.views import OAuthServerMetadataView

from . import views

urlpatterns = [
    # DOT: /o/authorize/, /o/token/, /o/revoke_token/, /o/introspect/,
    # /o/userinfo/, /o/.well-known/openid-configuration, /o/.well-known/jwks.json,
    # /o/device-authorization/, /o/device/ ...
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    # RFC 8414 metadata at the origin root with the issuer path appended.
    path(".well-known/oauth-authorization-server/o", OAuthServerMetadataView.as_view()),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(template_name="registration/login.html"),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Test-only helpers.
    path("test/health", views.health, name="test-health"),
]
