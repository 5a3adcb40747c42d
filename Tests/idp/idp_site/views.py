"""Test-only views of the fixture IdP."""

from django.conf import settings
from django.http import JsonResponse


def health(request):
    return JsonResponse({"ok": True, "name": settings.NAME, "issuer": settings.ISSUER})
