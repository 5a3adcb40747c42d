from django.conf import settings


def instance(request):
    return {"idp_name": settings.NAME, "idp_issuer": settings.ISSUER}
