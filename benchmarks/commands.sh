#!/usr/bin/env bash
# Everything a script asks Latchkey for, next to what it costs elsewhere, in ONE hyperfine run
# (cold processes, -N, 5 warm-ups, median of RUNS, default 40):
#
#   cat VAULT                          the floor: read the vault file (200 accounts) and print it
#   latchkey status --json             200 accounts, key cached in the kernel keyring (no scrypt):
#                                      answered by the launcher from the vault
#   latchkey token NAME                with its kernel-keyring copy (the fast path)
#   latchkey token NAME, no copy       the copies dropped before each run (as right after
#                                      `latchkey unlock`): the launcher opens the vault with the
#                                      cached key and prints the token (it writes no copies)
#   latchkey-cli --version             start-up of the full command alone
#   oidc-token NAME                    oidc-agent 4.2.6 (C), asking its running agent
#   gh auth token                      GitHub CLI (Go), reading its hosts file
#
# latchkey's accounts are written straight into a throw-away vault (latchkey-vault-stress seed);
# oidc-agent gets a throw-away account at the test OpenID provider (Tests/idp) through the
# device flow, offline. Prints a Markdown table (medians, ratios) for benchmarks/README.md.
#
#   benchmarks/commands.sh [path/to/latchkey] [RUNS] [ACCOUNTS]
#
# ACCOUNTS (default 200) is how many accounts the vault holds; every latchkey row reads that vault.
# Default: a release build, built here (latchkey-cli and latchkey-vault-stress beside it).
# oidc-agent-cli, gh and keyutils are benchmark-only: installed here (apt-get) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
scripts/setup
venv="${LATCHKEY_TEST_VENV:-$PWD/.venv-test}"
latchkey="${1:-}"
runs="${2:-40}"
count="${3:-200}"
if [ -z "$latchkey" ]; then
    for product in latchkey latchkey-cli latchkey-vault-stress; do swift build -c release --no-color-diagnostics --product "$product" >&2; done
    latchkey="$PWD/.build/release/latchkey"
fi
latchkey=$(realpath "$latchkey")
bin=$(dirname "$latchkey")

missing=()
command -v oidc-token >/dev/null || missing+=(oidc-agent-cli)
command -v gh >/dev/null || missing+=(gh)
command -v keyctl >/dev/null || missing+=(keyutils)
if [ ${#missing[@]} -gt 0 ]; then
    echo "commands.sh: installing the peers and tools this benchmark compares with: ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work=$(mktemp -d /tmp/latchkey-commands.XXXXXX)
chmod 700 "$work"
mkdir -p "$work/providers" "$work/data/latchkey" "$work/config" "$work/home" "$work/gh"
chmod 700 "$work/data" "$work/data/latchkey"
printf 'benchmark passphrase\n' >"$work/passphrase" && chmod 600 "$work/passphrase"
export HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" LATCHKEY_PROVIDERS_DIR="$work/providers" \
    LATCHKEY_PASSPHRASE_FILE="$work/passphrase"
vault="$work/data/latchkey/vault"
idp=""
agent=""
cleanup() {
    "$latchkey" lock >/dev/null 2>&1 || true
    [ -n "$agent" ] && kill "$agent" 2>/dev/null
    [ -n "$idp" ] && kill "$idp" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# The shipped presets plus the provider of the accounts: a realistic providers.d.
cp providers.d/*.toml "$work/providers/"
printf 'display_name = "Stress"\nkind = "oidc"\nissuer = "https://issuer.invalid"\nclient_id = "bench"\n' >"$work/providers/stress.toml"
expiry=$(($(date +%s) + 7200))
mapfile -t accounts < <(for i in $(seq 1 "$count"); do echo "subject-$i:user-$i@$expiry"; done)
"$bin/latchkey-vault-stress" seed "$vault" stress "${accounts[@]}"
"$latchkey" unlock --for 30m 2>/dev/null
"$bin/latchkey-cli" status >/dev/null # the full command writes the token copies
[ "$("$latchkey" token stress:user-1)" = "fake-access-subject-1" ]
names=("cat vault ($count accounts)" "latchkey status --json" "latchkey token, copy" "latchkey token, no copy" "latchkey-cli --version")
commands=("cat $vault" "$latchkey status --json" "$latchkey token stress:user-1" "$latchkey token stress:user-1" "$bin/latchkey-cli --version")
# Each run of "no copy" starts without copies; `sh -c` so the keyring id is looked up each time.
# The launcher's answer from the vault writes no copies, so after the first run there is none to drop.
prepares=(true true true "sh -c 'keyctl invalidate \$(keyctl search @u keyring latchkey:tokens:$vault 2>/dev/null) 2>/dev/null || true'" true)

# oidc-agent: its own agent, a public device-flow client at the test provider, no config file.
"$venv/bin/python" Tests/idp/run_idp.py --port 0 --name bench --data-dir "$work/idp" >"$work/idp.out" 2>"$work/idp.err" &
idp=$!
for _ in $(seq 1 150); do grep -q READY "$work/idp.out" 2>/dev/null && break; sleep 0.1; done
issuer=$(sed -n 's/^READY //p' "$work/idp.out")
eval "$(oidc-agent --quiet | grep -v '^echo')"
agent=$OIDCD_PID
oidc-gen bench --iss="$issuer" --client-id=latchkey-test-device --client-secret= --flow=device --scope=openid --no-save \
    --prompt=none --no-url-call --confirm-default >"$work/gen.out" 2>&1 &
generator=$!
for _ in $(seq 1 100); do grep -q "enter the code" "$work/gen.out" 2>/dev/null && break; sleep 0.1; done
LATCHKEY_TEST_UA_USER_CODE=$(sed -n 's/^And enter the code: //p' "$work/gen.out") Tests/idp/browser.sh "$issuer/device/"
wait "$generator" || { cat "$work/gen.out" >&2; exit 1; }
oidc-token bench >/dev/null
names+=("oidc-token (oidc-agent)")
commands+=("$(command -v oidc-token) bench")
prepares+=(true)

# gh reads the token from its hosts file when no credential store holds one: no network.
printf 'github.com:\n    oauth_token: gho_fake-benchmark-token\n    user: bench\n    git_protocol: https\n' >"$work/gh/hosts.yml"
export GH_CONFIG_DIR="$work/gh"
names+=("gh auth token")
commands+=("$(command -v gh) auth token")
prepares+=(true)

arguments=()
for index in "${!commands[@]}"; do
    arguments+=(--command-name "${names[$index]}" --prepare "${prepares[$index]}" "${commands[$index]}")
done
hyperfine -N --warmup 5 --runs "$runs" --export-json "$work/commands.json" "${arguments[@]}" >&2

"$venv/bin/python" - "$work/commands.json" "$runs" "$count" <<'PY'
import json, platform, subprocess, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
ms = {name: r["median"] * 1000 for name, r in results.items()}
cat, status = ms[f"cat vault ({sys.argv[3]} accounts)"], ms["latchkey status --json"]
no_copy, copy, oidc = ms["latchkey token, no copy"], ms["latchkey token, copy"], ms["oidc-token (oidc-agent)"]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
print(f"{cpu}, {subprocess.getoutput('nproc')} cores, {platform.system()} {platform.release()}; median of {sys.argv[2]} runs\n")
print("| command | median | vs cat of the vault | vs oidc-token |")
print("| --- | ---: | ---: | ---: |")
for name, value in ms.items():
    print(f"| {name} | {value:.2f} ms | {value / cat:.1f}× | {value / oidc:.2f}× |")
print(f"\nstatus --json: {status / cat:.1f}× cat (target ≤ 12×); token without a copy: {no_copy:.2f} ms (target ≤ 5 ms); "
      f"token with a copy: {copy / oidc:.2f}× oidc-token")
PY
