#!/usr/bin/env bash
# The screen's responsiveness with 50 providers and 200 accounts (vault key cached in the kernel
# keyring): time from start to the first complete frame (the header says "200 accounts"), and
# from a key press (j/k) to the redraw it causes. Medians over RUNS (default 21) runs, in a pty.
#
#   benchmarks/tui-first-frame.sh [RUNS]      (LATCHKEY_BIN picks another binary; default: release)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
runs=${1:-21}
if [ -z "${LATCHKEY_BIN:-}" ]; then
    swift build -c release --no-color-diagnostics --product latchkey >&2
    # `latchkey` hands everything but the token fast path to `latchkey-cli` beside it.
    swift build -c release --no-color-diagnostics --product latchkey-cli >&2
    swift build -c release --no-color-diagnostics --product latchkey-vault-stress >&2
    LATCHKEY_BIN=.build/release/latchkey
fi
stress=$(dirname "$LATCHKEY_BIN")/latchkey-vault-stress
[ -x "$stress" ] || swift build -c "$(basename "$(dirname "$LATCHKEY_BIN")")" --no-color-diagnostics --product latchkey-vault-stress >&2
work=$(mktemp -d /tmp/latchkey-tui-bench.XXXXXX)
trap 'LATCHKEY_PASSPHRASE_FILE="$work/passphrase" XDG_DATA_HOME="$work/data" "$LATCHKEY_BIN" lock >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
chmod 700 "$work"
mkdir -p "$work/providers" "$work/data/latchkey" "$work/home" "$work/config"
printf 'benchmark passphrase\n' >"$work/passphrase" && chmod 600 "$work/passphrase"
# 49 providers, plus "stress" (listed first), which holds the 200 accounts latchkey-vault-stress writes.
for i in $(seq -w 1 49); do
    printf 'display_name = "Provider %s"\nkind = "oidc"\nissuer = "http://127.0.0.1:9/p%s"\nclient_id = "bench"\n' "$i" "$i" \
        >"$work/providers/x$i.toml"
done
printf 'display_name = "Stress"\nkind = "oidc"\nissuer = "https://issuer.invalid"\nclient_id = "bench"\n' >"$work/providers/stress.toml"
LATCHKEY_PASSPHRASE_FILE="$work/passphrase" "$stress" write "$work/data/latchkey/vault" account 200 >/dev/null

python3 - "$LATCHKEY_BIN" "$work" "$runs" <<'PY'
import os, pty, select, signal, statistics, struct, sys, termios, fcntl, time

binary, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
env = {
    "PATH": "/usr/bin:/bin", "HOME": f"{work}/home", "XDG_CONFIG_HOME": f"{work}/config", "XDG_DATA_HOME": f"{work}/data",
    "LATCHKEY_PROVIDERS_DIR": f"{work}/providers", "LATCHKEY_PASSPHRASE_FILE": f"{work}/passphrase",
    "TERM": "xterm-256color", "LANG": "C.UTF-8",
}

def start():
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.execve(binary, [binary, "screen"], env)
    return pid, fd

def read_until(fd, needle, deadline):
    seen = b""
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.5)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            seen += chunk
            if needle in seen:
                return seen
    raise SystemExit(f"timed out waiting for {needle!r}; got {seen[-400:]!r}")

def drain(fd, quiet):
    """Reads until nothing came for `quiet` seconds."""
    while select.select([fd], [], [], quiet)[0]:
        os.read(fd, 65536)

def wait_for_tick(fd):
    """Waits for the next once-a-second redraw to be over."""
    drain(fd, 0.03)
    if not select.select([fd], [], [], 2)[0]:
        raise SystemExit("the clock never redrew the header")
    drain(fd, 0.03)

def stop(pid, fd):
    os.write(fd, b"q")
    try:
        os.waitpid(pid, 0)
    finally:
        os.close(fd)

first_paint, first_frame, key_latency = [], [], []
for run in range(runs):
    started = time.monotonic()
    pid, fd = start()
    seen = read_until(fd, b"Latchkey", started + 30)
    first_paint.append(time.monotonic() - started)
    if b"200 accounts" not in seen:
        read_until(fd, b"200 accounts", started + 30)
    first_frame.append(time.monotonic() - started)
    if run == 0:
        # Key to redraw: j and k move the selection, and each press is timed to the first byte
        # of its redraw. The clock redraws the header once a second, so each key is sent just
        # after such a redraw (and 30 ms of quiet), when nothing else is about to be drawn.
        for press in range(max(runs, 20)):
            wait_for_tick(fd)
            sent = time.monotonic()
            os.write(fd, b"j" if press % 2 == 0 else b"k")
            if not select.select([fd], [], [], 5)[0]:
                raise SystemExit("no redraw after a key press")
            key_latency.append(time.monotonic() - sent)
            drain(fd, 0.03)
    stop(pid, fd)

ms = lambda xs: f"{statistics.median(xs) * 1000:.1f} ms"
print(f"first complete frame (50 providers, 200 accounts, cached key): median {ms(first_frame)} over {len(first_frame)} runs"
      f" (min {min(first_frame) * 1000:.1f}, max {max(first_frame) * 1000:.1f})")
print(f"first paint (header, vault still opening): median {ms(first_paint)}")
print(f"key to redraw (j/k, 50 providers, 200 accounts): median {ms(key_latency)} over {len(key_latency)} presses"
      f" (min {min(key_latency) * 1000:.1f}, max {max(key_latency) * 1000:.1f})")
PY
