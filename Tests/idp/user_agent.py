#!/usr/bin/env python3
"""
Scripted "person with a browser" for Latchkey's end-to-end tests.

Latchkey runs `$BROWSER <authorization-url>`; with BROWSER=Tests/idp/browser.sh
this script:

  1. GETs the authorization URL with a fresh cookie session and follows the
     IdP's own redirects to its login page;
  2. parses the login form (html.parser), POSTs username/password
     (LATCHKEY_TEST_UA_USER, default alice; LATCHKEY_TEST_UA_PASSWORD, default
     "correct horse battery staple") together with every hidden field;
  3. parses the consent form and submits it with "allow" (all hidden fields
     preserved) -- or presses Cancel in `deny` mode;
  4. takes the 302 Location that leaves the IdP (the loopback redirect URI)
     WITHOUT following it, applies the tampering modes, and
  5. delivers it with a GET to the loopback listener, as a browser would.

Environment (all optional):
  LATCHKEY_TEST_UA_USER / LATCHKEY_TEST_UA_PASSWORD   credentials
  LATCHKEY_TEST_UA_TAMPER    comma-separated list of:
      path=/p         deliver at another path on the same host:port
      then-right-path after that delivery (whatever its answer), deliver the
                      same response at the redirect URI's own path
      iss=URL         replace (or add) the iss parameter
      drop-iss        remove iss
      state=VALUE     replace state          drop-state   remove state
      replay          deliver the same URL twice (2nd outcome ignored)
      error=CODE      skip login/consent; deliver
                      <redirect_uri>?error=CODE[&error_description=..]&state=<real>&iss=<issuer>
                      (description from LATCHKEY_TEST_UA_ERROR_DESCRIPTION)
      deny            press Cancel on the consent form, deliver DOT's answer
      save=PATH       write the final URL (no trailing newline) to PATH instead of delivering
  LATCHKEY_TEST_UA_ERROR_DESCRIPTION  see error=CODE (may hold raw control characters)
  LATCHKEY_TEST_UA_ISSUER    issuer for error=CODE (default: from the IdP's discovery)
  LATCHKEY_TEST_UA_USER_CODE device flow: code to type (default: the user_code in the URL)
  LATCHKEY_TEST_UA_DELAY     seconds to sleep before starting (float, default 0)
  LATCHKEY_TEST_UA_LOG       append a log of what was done to this file (codes,
                             states and tokens are masked)
  LATCHKEY_TEST_UA_DETACH=1  fork into the background and exit 0 at once (like
                             xdg-open); the outcome is then only in the log

glewlwyd (Tests/glewlwyd): when the IdP redirects to its JavaScript login app
(<external_url>/login.html?...&callback_url=...), the person logs in and
consents through glewlwyd's JSON API instead (Tests/glewlwyd/glewlwyd_login.py),
then continues at callback_url. `deny` is not supported there (exit 1).

Device flow (RFC 8628): given DOT's verification URI (/o/device/, or
verification_uri_complete with ?user_code=), the person logs in, enters the
user code and presses Accept (Deny with `deny`); nothing is delivered.

Every delivery is logged with the listener's HTTP status ("-> HTTP 404").
The person talks to loopback only: proxy variables in the environment are
ignored (they are there for latchkey, which must not use them for loopback).

Prints nothing on stdout. Exit status: 0 when the redirect was delivered (any
HTTP answer from the listener counts) or saved; 1 on failure (one line on
stderr, and in the log if set); 2 on bad usage.
"""

import os
import sys
import time
from html.parser import HTMLParser
from urllib.parse import parse_qsl, quote, unquote_plus, urlencode, urljoin, urlsplit, urlunsplit

import requests

DEFAULT_USER = "alice"
DEFAULT_PASSWORD = "correct horse battery staple"
MAX_STEPS = 15
HTTP_TIMEOUT = 15

SECRET_PARAMS = {
    "code",
    "state",
    "access_token",
    "refresh_token",
    "id_token",
    "code_verifier",
    "code_challenge",
    "nonce",
    "csrfmiddlewaretoken",
    "password",
}


class UAError(Exception):
    pass


# --------------------------------------------------------------------------- logging


def mask(value):
    if value is None:
        return None
    value = str(value)
    if len(value) <= 4:
        return "*" * len(value)
    return f"{value[:4]}...({len(value)})"


def mask_url(url):
    """URL with secret-looking query values masked and control characters escaped."""
    parts = urlsplit(url)
    pairs = []
    for k, v in parse_qsl(parts.query, keep_blank_values=True):
        if k in SECRET_PARAMS:
            v = mask(v)
        elif k == "next":
            v = mask_url(v)
        pairs.append(f"{k}={v!a}" if any(ord(c) < 32 or ord(c) == 127 for c in v) else f"{k}={v}")
    query = "&".join(pairs)
    return urlunsplit(parts._replace(query=query)).encode("ascii", "backslashreplace").decode("ascii")


class Log:
    def __init__(self, path):
        self.path = path

    def __call__(self, msg):
        if not self.path:
            return
        line = f"{time.strftime('%H:%M:%S')} [ua {os.getpid()}] {msg}\n"
        with open(self.path, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(line)


# --------------------------------------------------------------------------- HTML forms


class FormParser(HTMLParser):
    """Collects <form>s with their <input>s and <button>s (standard library only)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms = []
        self._form = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            self._form = {
                "id": a.get("id", ""),
                "action": a.get("action", ""),
                "method": (a.get("method") or "get").lower(),
                "inputs": [],  # (name, type, value)
            }
            self.forms.append(self._form)
        elif tag in ("input", "button") and self._form is not None:
            itype = (a.get("type") or ("submit" if tag == "button" else "text")).lower()
            self._form["inputs"].append((a.get("name", ""), itype, a.get("value", "")))

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None

    def handle_data(self, data):
        if data.strip():
            self.text.append(data.strip())


def parse_page(html_text):
    p = FormParser()
    p.feed(html_text)
    p.close()
    return p


def hidden_fields(form):
    return [(n, v) for n, t, v in form["inputs"] if n and t == "hidden"]


# --------------------------------------------------------------------------- tampering


def parse_tamper(spec):
    t = {"replay": False, "deny": False, "drop_iss": False, "drop_state": False, "then_right_path": False}
    for item in (spec or "").split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if key in ("replay", "deny", "drop-iss", "drop-state", "then-right-path") and not sep:
            t[key.replace("-", "_")] = True
        elif key in ("path", "iss", "state", "error", "save") and sep:
            t[key] = value
        else:
            raise ValueError(f"unknown LATCHKEY_TEST_UA_TAMPER item {item!r}")
    if "path" in t and not t["path"].startswith("/"):
        raise ValueError("path= must start with '/'")
    if t["then_right_path"] and "path" not in t:
        raise ValueError("then-right-path needs path=")
    return t


def _set_param(raw_pairs, name, value):
    """raw_pairs: list of raw 'k=v' strings. Replace name's value in place, or append."""
    new = f"{quote(name, safe='')}={quote(value, safe='')}"
    out, done = [], False
    for raw in raw_pairs:
        if unquote_plus(raw.partition("=")[0]) == name:
            if not done:
                out.append(new)
                done = True
            continue
        out.append(raw)
    if not done:
        out.append(new)
    return out


def _drop_param(raw_pairs, name):
    return [raw for raw in raw_pairs if unquote_plus(raw.partition("=")[0]) != name]


def apply_tamper(url, t):
    parts = urlsplit(url)
    raw = [p for p in parts.query.split("&") if p] if parts.query else []
    if "iss" in t:
        raw = _set_param(raw, "iss", t["iss"])
    if t["drop_iss"]:
        raw = _drop_param(raw, "iss")
    if "state" in t:
        raw = _set_param(raw, "state", t["state"])
    if t["drop_state"]:
        raw = _drop_param(raw, "state")
    path = t.get("path", parts.path)
    return urlunsplit(parts._replace(path=path, query="&".join(raw)))


# --------------------------------------------------------------------------- the person


def loopback_session():
    """A session that ignores proxy variables: everything the person talks to is on loopback."""
    s = requests.Session()
    s.trust_env = False
    return s


def origin(url):
    p = urlsplit(url)
    return (p.scheme, p.netloc.lower())


def is_redirect(resp):
    return resp.status_code in (301, 302, 303, 307, 308) and "Location" in resp.headers


def page_summary(page):
    return " ".join(page.text)[:200]


GLEWLWYD_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "glewlwyd")


def is_glewlwyd_login(url):
    """glewlwyd's redirect to its login web app: <external_url>/login.html?...&callback_url=..."""
    p = urlsplit(url)
    if not p.path.endswith("/login.html") or "callback_url=" not in p.query:
        return False
    if GLEWLWYD_DIR not in sys.path:
        sys.path.insert(0, GLEWLWYD_DIR)
    return True


def drive(auth_url, user, password, deny, log):
    """Log in and answer the consent form; return the URL the IdP redirects to
    outside itself (the client's redirect URI), without requesting it.
    For a device-flow verification URI, enter the user code and accept (or
    deny); returns None then, as there is nothing to deliver."""
    idp = origin(auth_url)
    s = loopback_session()
    s.headers["User-Agent"] = "LatchkeyTestUserAgent/1.0"
    url = auth_url
    resp = s.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT)
    log(f"GET {urlsplit(url).path} -> {resp.status_code}")
    logged_in = consented = code_entered = device_confirmed = False
    for _ in range(MAX_STEPS):
        if is_redirect(resp):
            nxt = urljoin(resp.url, resp.headers["Location"])
            if origin(nxt) != idp:
                log(f"IdP redirects out to {mask_url(nxt)}")
                return nxt
            url = nxt
            if is_glewlwyd_login(url):
                # glewlwyd (Tests/glewlwyd): its login page is a JavaScript app;
                # sign in and consent through its JSON API instead.
                if logged_in:
                    raise UAError(f"glewlwyd sent {user!r} back to its login page after signing in")
                from glewlwyd_login import GlewlwydLoginError, sign_in

                try:
                    resp = sign_in(s, url, user, password, deny=deny, log=log)
                except GlewlwydLoginError as e:
                    raise UAError(str(e)) from None
                logged_in = consented = True
                continue
            resp = s.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT)
            log(f"GET {urlsplit(url).path} -> {resp.status_code}")
            continue
        page = parse_page(resp.text)
        if resp.status_code != 200:
            raise UAError(f"IdP answered HTTP {resp.status_code} at {urlsplit(resp.url).path}: {page_summary(page)}")
        login = next((f for f in page.forms if any(t == "password" for _, t, _ in f["inputs"])), None)
        consent = next(
            (
                f
                for f in page.forms
                if f["id"] == "authorizationForm"
                or {"client_id", "redirect_uri"} <= {n for n, _, _ in f["inputs"]}
            ),
            None,
        )
        if login is not None:
            if logged_in:
                raise UAError(f"login as {user!r} failed: {page_summary(page)}")
            fields = hidden_fields(login)
            for name, itype, _ in login["inputs"]:
                if itype == "password":
                    fields.append((name, password))
                elif itype in ("text", "email") and name:
                    fields.append((name, user))
            action = urljoin(resp.url, login["action"] or resp.url)
            resp = s.post(action, data=fields, allow_redirects=False, timeout=HTTP_TIMEOUT,
                          headers={"Referer": resp.url})
            log(f"POST {urlsplit(action).path} (login as {user}) -> {resp.status_code}")
            logged_in = True
            continue
        if consent is not None:
            if consented:
                raise UAError(f"consent form shown again: {page_summary(page)}")
            fields = hidden_fields(consent)
            if not deny:
                allow = next(((n, v) for n, t, v in consent["inputs"] if n == "allow"), ("allow", "Authorize"))
                fields.append(allow)
            action = urljoin(resp.url, consent["action"] or resp.url)
            resp = s.post(action, data=fields, allow_redirects=False, timeout=HTTP_TIMEOUT,
                          headers={"Referer": resp.url})
            log(f"POST {urlsplit(action).path} ({'deny' if deny else 'allow'}) -> {resp.status_code}")
            consented = True
            continue
        # RFC 8628 device flow pages of DOT: enter the user code, then Accept/Deny.
        code_form = next((f for f in page.forms if any(n == "user_code" for n, _, _ in f["inputs"])), None)
        device_form = next(
            (f for f in page.forms if {"accept", "deny"} <= {v for n, _, v in f["inputs"] if n == "action"}), None
        )
        if code_form is not None and not device_confirmed:
            fields = hidden_fields(code_form)
            given = next((v for n, _, v in code_form["inputs"] if n == "user_code"), "")
            user_code = os.environ.get("LATCHKEY_TEST_UA_USER_CODE") or given
            if not user_code:
                raise UAError("device flow: no user code (set LATCHKEY_TEST_UA_USER_CODE)")
            if code_entered:
                raise UAError(f"device flow: user code rejected: {page_summary(page)}")
            fields.append(("user_code", user_code))
            action = urljoin(resp.url, code_form["action"] or resp.url)
            resp = s.post(action, data=fields, allow_redirects=False, timeout=HTTP_TIMEOUT,
                          headers={"Referer": resp.url})
            log(f"POST {urlsplit(action).path} (user code {mask(user_code)}) -> {resp.status_code}")
            code_entered = True
            continue
        if device_form is not None and not device_confirmed:
            fields = hidden_fields(device_form) + [("action", "deny" if deny else "accept")]
            action = urljoin(resp.url, device_form["action"] or resp.url)
            resp = s.post(action, data=fields, allow_redirects=False, timeout=HTTP_TIMEOUT,
                          headers={"Referer": resp.url})
            log(f"POST {urlsplit(action).path} ({'deny' if deny else 'accept'} device) -> {resp.status_code}")
            device_confirmed = True
            continue
        if device_confirmed:
            log(f"device flow finished: {page_summary(page)}")
            return None
        raise UAError(f"unexpected IdP page at {urlsplit(resp.url).path}: {page_summary(page)}")
    raise UAError("too many steps at the IdP")


def discover_issuer(auth_url, log):
    override = os.environ.get("LATCHKEY_TEST_UA_ISSUER")
    if override:
        return override
    p = urlsplit(auth_url)
    base_path = p.path.rstrip("/").rsplit("/", 1)[0]  # /o/authorize/ -> /o
    base = urlunsplit((p.scheme, p.netloc, base_path, "", ""))
    try:
        r = loopback_session().get(base + "/.well-known/openid-configuration", timeout=HTTP_TIMEOUT)
        if r.ok:
            return r.json()["issuer"]
    except (requests.RequestException, ValueError, KeyError):
        pass
    log("discovery failed; guessing issuer from the authorization URL")
    return base


def error_redirect(auth_url, code, description, log):
    params = dict(parse_qsl(urlsplit(auth_url).query, keep_blank_values=True))
    redirect_uri = params.get("redirect_uri")
    if not redirect_uri:
        raise UAError("authorization URL has no redirect_uri")
    pairs = [("error", code)]
    if description is not None:
        pairs.append(("error_description", description))
    if "state" in params:
        pairs.append(("state", params["state"]))
    pairs.append(("iss", discover_issuer(auth_url, log)))
    return redirect_uri + ("&" if "?" in redirect_uri else "?") + urlencode(pairs)


def deliver(url, log, retry_seconds):
    deadline = time.monotonic() + retry_seconds
    while True:
        try:
            r = loopback_session().get(url, allow_redirects=False, timeout=HTTP_TIMEOUT)
            log(f"delivered {mask_url(url)} -> HTTP {r.status_code}")
            return r.status_code
        except requests.ConnectionError as e:
            if time.monotonic() >= deadline:
                raise UAError(f"could not deliver to {urlsplit(url).netloc}: {type(e).__name__}") from None
            time.sleep(0.1)


def user_from(env):
    """Who signs in: the first line of LATCHKEY_TEST_UA_USER_FILE when set (a test can change it
    while a screen stays open), else LATCHKEY_TEST_UA_USER, else the default user."""
    path = env.get("LATCHKEY_TEST_UA_USER_FILE")
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return f.readline().strip() or DEFAULT_USER
    return env.get("LATCHKEY_TEST_UA_USER") or DEFAULT_USER


def run(auth_url, env=None):
    """Do everything; returns the final (tampered) URL. Raises UAError/ValueError."""
    env = os.environ if env is None else env
    log = Log(env.get("LATCHKEY_TEST_UA_LOG"))
    delay = float(env.get("LATCHKEY_TEST_UA_DELAY") or 0)
    tamper = parse_tamper(env.get("LATCHKEY_TEST_UA_TAMPER", ""))
    log(f"start: {mask_url(auth_url)} tamper={sorted(k for k, v in tamper.items() if v)}")
    if delay > 0:
        time.sleep(delay)

    if "error" in tamper:
        final = error_redirect(auth_url, tamper["error"], env.get("LATCHKEY_TEST_UA_ERROR_DESCRIPTION"), log)
    else:
        final = drive(
            auth_url,
            user_from(env),
            env.get("LATCHKEY_TEST_UA_PASSWORD") or DEFAULT_PASSWORD,
            tamper["deny"],
            log,
        )
    if final is None:  # device flow: the person is done once the IdP shows the status page
        log("done (device flow)")
        return None
    redirect, final = final, apply_tamper(final, tamper)

    if "save" in tamper:
        with open(tamper["save"], "w", encoding="utf-8") as f:
            f.write(final)
        log(f"saved {mask_url(final)} to {tamper['save']}")
        return final

    deliver(final, log, retry_seconds=5)
    if tamper["then_right_path"]:
        final = apply_tamper(redirect, {k: v for k, v in tamper.items() if k != "path"})
        deliver(final, log, retry_seconds=0)
    if tamper["replay"]:
        try:
            deliver(final, log, retry_seconds=0)
        except (UAError, requests.RequestException) as e:
            log(f"replay delivery failed (fine): {e}")
    log("done")
    return final


def main(argv):
    urls = [a for a in argv[1:] if a.startswith(("http://", "https://"))]
    if not urls:
        print("usage: user_agent.py <authorization-url>", file=sys.stderr)
        return 2
    if os.environ.get("LATCHKEY_TEST_UA_DETACH") == "1":
        if os.fork() > 0:
            return 0
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
    log = Log(os.environ.get("LATCHKEY_TEST_UA_LOG"))
    try:
        run(urls[-1])
        return 0
    except ValueError as e:
        log(f"usage error: {e}")
        print(f"user_agent: {e}", file=sys.stderr)
        return 2
    except (UAError, requests.RequestException) as e:
        msg = str(e).encode("ascii", "backslashreplace").decode("ascii")
        log(f"FAILED: {msg}")
        print(f"user_agent: FAILED: {msg}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
