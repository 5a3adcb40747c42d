"""
Another user on the same machine against the libraries ``latchkey-cli`` loads, with the built binaries:

* nothing is loaded from beside the program: the products carry no run path (SwiftPM links
  executables with ``RUNPATH $ORIGIN`` unless told not to), so an ``libncursesw.so.6`` (or a libc)
  put beside ``latchkey-cli`` is not loaded at start; and libcurl is opened by absolute path from
  the system's library directories, so a ``libcurl.so.4`` beside it (or in ``LD_LIBRARY_PATH``)
  never runs, whether the launcher or a person starts it;
* the launcher does not run ``latchkey-cli`` from a sticky directory others can write (such as
  /tmp): others cannot replace it there, but they can put files beside it; a sticky directory
  further up is still accepted;
* ``scripts/install`` refuses a program that has a run path.

Each attack test failed on the code before these checks (a debug build of commit 9ff6473: the planted
library's constructor wrote its marker, the launcher ran latchkey-cli from a 1777 directory, latchkey-cli
had ``RUNPATH [$ORIGIN]``, and that scripts/install installed it).
"""
from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import EX_OK, EX_UNEXPECTED, LATCHKEY_BIN
from test_install import BUILD_DIR, install

PROGRAMS = ("latchkey", "latchkey-cli")
# Every name the old code looked up with a bare dlopen, and libraries libcurl needs (OpenSSL, nghttp2, zlib).
PLANTED_NAMES = (
    "libcurl.so.4", "libcurl-gnutls.so.4", "libsecret-1.so.0", "libglib-2.0.so.0", "libssl.so.3", "libcrypto.so.3",
    "libnghttp2.so.14", "libz.so.1")


def dynamic_section(program: Path) -> str:
    return subprocess.run(["readelf", "-d", str(program)], capture_output=True, text=True, check=True).stdout


def plant_libraries(directory: Path, marker: Path, names: tuple[str, ...] = PLANTED_NAMES) -> None:
    """Another user's shared library under each name: its constructor leaves `marker` if it is loaded."""
    source = directory / "planted.c"
    source.write_text(
        "#include <fcntl.h>\n#include <unistd.h>\n"
        "__attribute__((constructor)) static void planted(void) {\n"
        f'    int fd = open("{marker}", O_CREAT | O_WRONLY, 0644);\n'
        "    if (fd >= 0) close(fd);\n}\n")
    library = directory / "planted.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True, capture_output=True)
    source.unlink()
    for name in names:
        shutil.copyfile(library, directory / name)
    library.unlink()


def copy_programs(directory: Path, mode: int = 0o755) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(mode)
    for program in PROGRAMS:
        shutil.copy2(BUILD_DIR / program, directory / program)


class Discovery(http.server.BaseHTTPRequestHandler):
    """An issuer with no discovery document: a request that arrives is all the test needs."""

    requests: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        Discovery.requests.append(self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def issuer():
    """A loopback issuer; yields its URL and the paths requested of it."""
    Discovery.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Discovery)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", Discovery.requests
    server.shutdown()
    server.server_close()


def add_provider(lk, program: Path, issuer: str) -> subprocess.CompletedProcess:
    """`providers add --issuer`: reads the issuer's discovery document, through libcurl."""
    return subprocess.run(
        [str(program), "providers", "add", "--issuer", issuer, "--name", "planted"],
        env=lk.env(), cwd=lk.root, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


# --------------------------------------------------------------------------- no run path


@pytest.mark.parametrize("program", PROGRAMS)
def test_the_built_programs_have_no_run_path(program):
    """No RUNPATH or RPATH at all: the loader takes libc, ncurses and the rest from the system only."""
    section = dynamic_section(BUILD_DIR / program)
    assert "RUNPATH" not in section and "RPATH" not in section and "$ORIGIN" not in section, (
        f"{BUILD_DIR / program} has a run path; build it with scripts/install --build-only (or swift build "
        f"--disable-local-rpath)\n{section}")


def test_install_refuses_a_program_with_a_run_path(tmp_path):
    built = tmp_path / "built"
    built.mkdir()
    shutil.copy2(BUILD_DIR / "latchkey", built / "latchkey")
    # latchkey-cli as a bare `swift build` links it: with RUNPATH $ORIGIN.
    source = tmp_path / "main.c"
    source.write_text("int main(void) { return 0; }\n")
    subprocess.run(["gcc", "-o", str(built / "latchkey-cli"), str(source), "-Wl,-rpath,$ORIGIN"], check=True)
    result = install(tmp_path / "prefix", "--from", str(built), expect=65)
    assert f"{built}/latchkey-cli has a run path ([$ORIGIN])" in result.stderr, result.stderr
    assert "--disable-local-rpath" in result.stderr
    assert not (tmp_path / "prefix").exists()


# --------------------------------------------------------------------------- libraries beside the program


@pytest.mark.parametrize("program", PROGRAMS)
def test_an_ncurses_planted_beside_latchkey_cli_is_never_loaded_at_start(lk, program):
    """A library latchkey-cli is linked with (ncurses, as libc would be): with RUNPATH $ORIGIN the loader took it from
    beside the program before main, for any command."""
    directory = lk.root / "bin"
    copy_programs(directory)
    marker = lk.root / "planted-library-ran"
    plant_libraries(directory, marker, ("libncursesw.so.6",))
    result = subprocess.run(
        [str(directory / program), "--version"], env=lk.env(), cwd=lk.root, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=60)
    assert not marker.exists(), f"a library planted beside latchkey-cli was loaded\n{result.stderr}"
    assert result.returncode == EX_OK and result.stderr == "", result


def test_a_libcurl_planted_beside_latchkey_cli_is_never_loaded(lk, issuer):
    """The launcher's check accepts this directory (it is ours): what is beside the program must still not load."""
    url, requests = issuer
    directory = lk.root / "bin"
    copy_programs(directory)
    marker = lk.root / "planted-library-ran"
    plant_libraries(directory, marker)
    result = add_provider(lk, directory / "latchkey", url)
    assert not marker.exists(), f"a library planted beside latchkey-cli was loaded\n{result.stderr}"
    assert requests == ["/.well-known/openid-configuration"], result  # the system's libcurl made the request
    assert result.returncode == EX_OK, result


def test_a_libcurl_planted_beside_latchkey_cli_in_a_sticky_directory_is_never_loaded_when_run_directly(lk, issuer):
    """Run without the launcher from /tmp, say: another user may add files there, and must not be loaded."""
    url, requests = issuer
    directory = lk.root / "shared"
    copy_programs(directory, 0o1777)
    marker = lk.root / "planted-library-ran"
    plant_libraries(directory, marker)
    result = add_provider(lk, directory / "latchkey-cli", url)
    assert not marker.exists(), f"a library planted beside latchkey-cli was loaded\n{result.stderr}"
    assert requests == ["/.well-known/openid-configuration"], result
    assert result.returncode == EX_OK, result


def test_a_libcurl_in_ld_library_path_is_not_loaded_either(lk, issuer):
    """libcurl is opened by its absolute path, so no search path reaches it: not even LD_LIBRARY_PATH, though
    that is the person's own choice (and still reaches libcurl's own dependencies, as the loader decides)."""
    url, requests = issuer
    directory = lk.root / "lib"
    directory.mkdir()
    marker = lk.root / "planted-library-ran"
    plant_libraries(directory, marker, ("libcurl.so.4", "libcurl-gnutls.so.4", "libsecret-1.so.0"))
    result = subprocess.run(
        [str(LATCHKEY_BIN), "providers", "add", "--issuer", url, "--name", "planted"],
        env=lk.env(LD_LIBRARY_PATH=str(directory)), cwd=lk.root, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=60)
    assert not marker.exists(), result.stderr
    assert result.returncode == EX_OK and requests, result


# --------------------------------------------------------------------------- the launcher and sticky directories


def test_the_launcher_refuses_to_run_latchkey_cli_from_a_sticky_directory_others_can_write(lk):
    directory = lk.root / "shared"
    copy_programs(directory, 0o1777)
    marker = lk.root / "planted-library-ran"
    plant_libraries(directory, marker)
    result = subprocess.run(
        [str(directory / "latchkey"), "--version"], env=lk.env(), cwd=lk.root, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=60)
    assert result.returncode == EX_UNEXPECTED and result.stdout == "", result
    program = directory / "latchkey-cli"
    assert (
        f"latchkey: refusing to run {program}: {directory} is writable by other users (mode 1777: sticky, but they can add "
        "files beside it); another user could replace it, or put a library beside it, with code of their own; install "
        "Latchkey where only you or root can write") in result.stderr, result.stderr
    assert not marker.exists()


def test_a_sticky_directory_above_the_install_is_still_accepted(lk):
    """/tmp above a directory of ours: others may add entries to /tmp, but not change ours."""
    sticky = lk.root / "tmp-like"
    sticky.mkdir()
    sticky.chmod(0o1777)
    copy_programs(sticky / "mine" / "bin")
    result = subprocess.run(
        [str(sticky / "mine" / "bin" / "latchkey"), "--version"], env=lk.env(), cwd=lk.root, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60)
    assert result.returncode == EX_OK, result


def test_a_link_to_latchkey_cli_in_a_sticky_directory_is_refused(lk):
    """latchkey-cli a link into /tmp, say, from a private directory: what counts is the real file's directory."""
    private = lk.root / "bin"
    copy_programs(private)
    shared = lk.root / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (private / "latchkey-cli").rename(shared / "latchkey-cli")
    (private / "latchkey-cli").symlink_to(shared / "latchkey-cli")
    result = subprocess.run(
        [str(private / "latchkey"), "--version"], env=lk.env(), cwd=lk.root, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=60)
    assert result.returncode == EX_UNEXPECTED, result
    assert f"{shared} is writable by other users (mode 1777: sticky, but they can add files beside it)" in result.stderr, result
