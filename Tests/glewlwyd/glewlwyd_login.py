"""
Sign a person in at glewlwyd without a browser (used by Tests/idp/user_agent.py
and Tests/glewlwyd/selftest.py).

glewlwyd's authorization endpoint (ISSUER/auth) does not render HTML. When the
session cookie does not yet authorize the requested scopes it answers 302 to its
login web app (a JavaScript page, not served by our test instance):

    <external_url>/login.html?client_id=..&scope=..&callback_url=<ISSUER/auth?...>

The web app then calls the JSON API, which is what this module does too:

  1. POST <api>/auth/  {"username": U, "password": P}   -> 200 + session cookie
     (401, empty body, on a wrong password). The plain-password login takes
     no scheme_type; scheme_type "password" with a scheme_name belongs to the
     optional "retype-password" scheme module, which is not configured.
  2. PUT  <api>/auth/grant/<client_id>  {"scope": "openid email profile"}
     -> 200. This records the person's consent (space-separated, like the
     web app sends it).
  3. GET  <callback_url>&g_continue  -> 302 to the client's redirect URI with
     iss, state and code. Without `g_continue` glewlwyd sends the browser
     back to login.html again, even for a signed-in person who has
     already consented.

<api> is <external_url>/<api_prefix>; the prefix comes from GET <external_url>/config.
"""

from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

HTTP_TIMEOUT = 15


class GlewlwydLoginError(Exception):
    pass


def is_login_url(url):
    """True for glewlwyd's redirect to its login web app."""
    p = urlsplit(url)
    return p.path.endswith("/login.html") and "callback_url" in parse_qs(p.query)


def sign_in(session, login_url, user, password, deny=False, log=lambda msg: None):
    """Log in and consent through glewlwyd's API with a requests.Session; return the
    (unfollowed) response to <callback_url>&g_continue, normally a 302 to the
    client's redirect URI."""
    p = urlsplit(login_url)
    params = {k: v[0] for k, v in parse_qs(p.query, keep_blank_values=True).items()}
    callback = params["callback_url"]
    client_id = params.get("client_id", "")
    scope = params.get("scope", "")
    origin = urlunsplit((p.scheme, p.netloc, "", "", ""))
    # login.html sits at external_url + login_url; with login_url="login.html",
    # external_url is the directory part of the login page's path.
    external = origin + p.path.rsplit("/", 1)[0]
    r = session.get(external + "/config", timeout=HTTP_TIMEOUT)
    if r.status_code != 200:
        raise GlewlwydLoginError(f"GET /config -> HTTP {r.status_code}")
    api = external + "/" + r.json().get("api_prefix", "api").strip("/")

    if deny:
        # glewlwyd has no "cancel" that redirects with error=access_denied: its
        # login app simply never continues, and an empty grant still yields a
        # code (for scope "openid" only, see README.md).
        raise GlewlwydLoginError("deny is not supported at glewlwyd (no access_denied redirect)")

    r = session.post(api + "/auth/", json={"username": user, "password": password}, timeout=HTTP_TIMEOUT)
    log(f"POST {urlsplit(api).path}/auth/ (login as {user}) -> {r.status_code}")
    if r.status_code != 200:
        raise GlewlwydLoginError(f"login as {user!r} failed: HTTP {r.status_code}")

    if client_id and scope:
        r = session.put(api + "/auth/grant/" + quote(client_id, safe=""), json={"scope": scope},
                        timeout=HTTP_TIMEOUT)
        log(f"PUT {urlsplit(api).path}/auth/grant/{client_id} ({scope}) -> {r.status_code}")
        if r.status_code != 200:
            raise GlewlwydLoginError(f"consent (grant {scope!r}) failed: HTTP {r.status_code}")

    url = callback + ("&" if "?" in callback else "?") + "g_continue"
    r = session.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT)
    log(f"GET {urlsplit(url).path} (g_continue) -> {r.status_code}")
    return r
