"""
OpenSSL's environment against the built binaries: Latchkey's cryptography is OpenSSL 3's libcrypto
(``latchkey-cli`` loads libcrypto.so.3; the launcher links none, its vault code is Swift), and OpenSSL reads
a configuration file named by ``OPENSSL_CONF``, which can load a provider module (found in
``OPENSSL_MODULES``) or an engine (in ``OPENSSL_ENGINES``): code that would then run inside
``latchkey`` with the vault key and tokens. LatchkeyCrypto initialises OpenSSL without any
configuration before anything else in the process does, libcurl's TLS included (libcurl's
``curl_global_init`` would load the configuration, and ``latchkey-cli`` shares libcrypto with it).

The test writes a configuration that loads a provider and an engine whose constructors leave a
marker file, checks that the ``openssl`` command does load them with it (so the configuration
would work on a program that reads it), then signs in, opens the vault and answers a token (the
full command, then the launcher from the vault alone) with that environment: everything works and
the marker never appears.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EX_OK
from test_token_fast_path import drop_token_copies

MARKER_SOURCE = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Appends the path of the program that loaded this library to $LATCHKEY_TEST_OPENSSL_MARKER. */
__attribute__((constructor)) static void loaded(void) {
    const char *marker = getenv("LATCHKEY_TEST_OPENSSL_MARKER");
    if (!marker) return;
    char program[4096];
    ssize_t length = readlink("/proc/self/exe", program, sizeof program - 1);
    if (length < 0) length = 0;
    program[length++] = '\n';
    int fd = open(marker, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
        write(fd, program, (size_t)length);
        close(fd);
    }
}
"""


def hostile_openssl_environment(root: Path) -> tuple[dict, Path]:
    """OPENSSL_CONF, OPENSSL_MODULES and OPENSSL_ENGINES naming a provider and an engine that leave
    a marker when loaded; returns the environment and the marker's path."""
    root.mkdir(mode=0o700)
    source = root / "marker.c"
    source.write_text(MARKER_SOURCE)
    modules, engines = root / "modules", root / "engines"
    for directory in (modules, engines):
        directory.mkdir()
    library = root / "marker.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True, capture_output=True)
    # The provider by a name relative to OPENSSL_MODULES; the engine by an id the dynamic engine
    # looks for in OPENSSL_ENGINES (with and without the lib prefix).
    shutil.copyfile(library, modules / "marker-provider.so")
    for name in ("marker.so", "libmarker.so"):
        shutil.copyfile(library, engines / name)
    config = root / "openssl.cnf"
    config.write_text(
        "openssl_conf = openssl_init\n"
        "config_diagnostics = 1\n"
        "[openssl_init]\n"
        "providers = provider_section\n"
        "engines = engine_section\n"
        "[provider_section]\n"
        "default = default_section\n"
        "marker = marker_provider_section\n"
        "[default_section]\n"
        "activate = 1\n"
        "[marker_provider_section]\n"
        "module = marker-provider.so\n"
        "activate = 1\n"
        "[engine_section]\n"
        "marker = marker_engine_section\n"
        "[marker_engine_section]\n"
        "engine_id = marker\n"
        "init = 1\n")
    marker = root / "loaded"
    environment = {
        "OPENSSL_CONF": str(config), "OPENSSL_MODULES": str(modules), "OPENSSL_ENGINES": str(engines),
        "LATCHKEY_TEST_OPENSSL_MARKER": str(marker),
    }
    return environment, marker


def test_openssl_loads_no_configuration_provider_or_engine_the_environment_names(lk, idp_a, tmp_path):
    environment, marker = hostile_openssl_environment(tmp_path / "openssl")
    openssl = shutil.which("openssl")
    assert openssl, "the openssl command (Debian package openssl, scripts/setup) is needed for the control"
    # The control: a program that reads the configuration loads the marker.
    subprocess.run([openssl, "list", "-providers"], env=lk.env(**environment), capture_output=True, timeout=30)
    assert marker.exists() and Path(openssl).resolve().name in marker.read_text(), \
        "the configuration did not load the marker provider in the openssl command itself"
    marker.unlink()

    # A command whose first use of OpenSSL is libcurl's (a discovery request, no cryptography):
    # libcurl initialises libssl, which would read the configuration, were OpenSSL not
    # initialised without one before libcurl was loaded.
    added = lk.run("providers", "add", "--issuer", idp_a.issuer, "--name", "discovered", env=environment)
    assert added.code == EX_OK, f"providers add failed\n{added}"
    lk.add_provider("a", idp_a)
    # Sign-in: libcurl (discovery, token request), the ID token's RS256 signature, scrypt and
    # ChaCha20-Poly1305 for the vault, all in latchkey-cli.
    result = lk.login("a", env=environment)
    assert result.code == EX_OK, f"sign-in failed with OpenSSL's environment set\n{result}"
    # The full command opening the vault (scrypt), then the launcher's answers: from its token copy,
    # and from the vault itself.
    lk.run("lock", env=environment)
    status = lk.run("status", "--json", env=environment)
    assert status.code == EX_OK and status.json()["accounts"], f"status failed\n{status}"
    token = lk.run("token", "a", env=environment)
    assert token.code == EX_OK and token.stdout.strip(), f"token failed\n{token}"
    drop_token_copies(lk)
    lk.leave_only_the_launcher()
    from_vault = lk.run("token", "a", env=environment)
    assert from_vault.code == EX_OK and from_vault.stdout == token.stdout, f"the launcher did not answer from the vault\n{from_vault}"
    lk.restore_the_full_command()
    # The scripted browser (Python, whose ssl module reads OPENSSL_CONF) runs with this environment
    # too and may load the marker: only a latchkey program loading it counts.
    loaded_by = marker.read_text().splitlines() if marker.exists() else []
    assert not [program for program in loaded_by if "latchkey" in Path(program).name], \
        f"latchkey loaded a provider or engine named by OPENSSL_CONF: {loaded_by}"
    for run in (added, result, status, token, from_vault):
        # OpenSSL's own error lines read "error:…:… routines:…".
        assert "marker-provider" not in run.stderr and "routines" not in run.stderr, f"OpenSSL spoke of its configuration\n{run}"
