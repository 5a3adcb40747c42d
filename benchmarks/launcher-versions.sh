#!/usr/bin/env bash
# The token fast path of two builds in ONE hyperfine run: `latchkey token NAME` answered from its
# kernel-keyring copy, for this build and for a baseline (an older release build), so a change
# to the launcher is judged by the ratio of medians, not by times taken minutes apart.
#
#   benchmarks/launcher-versions.sh NEW/latchkey OLD/latchkey [RUNS]
#
# Each build gets its own throw-away vault (200 accounts, written by NEW's latchkey-vault-stress),
# config directory and token copies, made by its own latchkey-cli. This build's config.toml maps
# the directory the benchmark runs in to an account (`[directories."…"]`), so its launcher does
# the per-directory work a mapped project costs; the baseline's config.toml is empty and it answers
# for the provider's default account. Both
# commands run through env(1), so both pay the same exec. Prints the medians and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: benchmarks/launcher-versions.sh NEW/latchkey OLD/latchkey [RUNS]" >&2; exit 64; }
new=$(realpath "$1")
old=$(realpath "$2")
runs="${3:-100}"
venv="${LATCHKEY_TEST_VENV:-$PWD/.venv-test}"
command -v hyperfine >/dev/null || { echo "launcher-versions.sh: hyperfine is needed (scripts/setup installs it)" >&2; exit 69; }

work=$(mktemp -d /tmp/latchkey-versions.XXXXXX)
chmod 700 "$work"
cleanup() {
    for side in new old; do
        env HOME="$work/$side/home" XDG_CONFIG_HOME="$work/$side/config" XDG_DATA_HOME="$work/$side/data" \
            "${!side}" lock >/dev/null 2>&1 || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/providers" "$work/project"
printf 'display_name = "Stress"\nkind = "oidc"\nissuer = "https://issuer.invalid"\nclient_id = "bench"\n' >"$work/providers/stress.toml"
printf 'benchmark passphrase\n' >"$work/passphrase" && chmod 600 "$work/passphrase"
expiry=$(($(date +%s) + 7200))
mapfile -t accounts < <(for i in $(seq 1 200); do echo "subject-$i:user-$i@$expiry"; done)

commands=()
for side in new old; do
    latchkey="${!side}"
    root="$work/$side"
    mkdir -p "$root/home" "$root/config/latchkey" "$root/data/latchkey" "$root/run"
    chmod -R 700 "$root"
    if [ "$side" = new ]; then
        printf '[directories."%s"]\nstress = "user-2"\n' "$work/project" >"$root/config/latchkey/config.toml"
    else
        : >"$root/config/latchkey/config.toml"
    fi
    environment=(HOME="$root/home" XDG_CONFIG_HOME="$root/config" XDG_DATA_HOME="$root/data"
        LATCHKEY_PROVIDERS_DIR="$work/providers" LATCHKEY_PASSPHRASE_FILE="$work/passphrase" XDG_RUNTIME_DIR="$root/run")
    env "${environment[@]}" "$(dirname "$new")/latchkey-vault-stress" seed "$root/data/latchkey/vault" stress "${accounts[@]}"
    (cd "$work/project" && env "${environment[@]}" "$latchkey" unlock --for 30m 2>/dev/null)
    # The baseline answers for the provider's default account; then the full command writes the
    # token copies (and this build's copy of the mappings).
    [ "$side" = old ] && env "${environment[@]}" "$(dirname "$latchkey")/latchkey-cli" default stress:user-1 2>/dev/null
    (cd "$work/project" && env "${environment[@]}" "$(dirname "$latchkey")/latchkey-cli" status >/dev/null)
    expected=fake-access-subject-1
    [ "$side" = new ] && expected=fake-access-subject-2
    answer=$(cd "$work/project" && env "${environment[@]}" "$latchkey" token stress)
    [ "$answer" = "$expected" ] || { echo "launcher-versions.sh: $side answered $answer, not $expected" >&2; exit 1; }
    commands+=("env ${environment[*]} $latchkey token stress")
done

cd "$work/project"
hyperfine -N --warmup 10 --runs "$runs" --export-json "$work/versions.json" -n "this build" -n baseline "${commands[@]}" >&2
"$venv/bin/python" - "$work/versions.json" <<'PY'
import json, sys
new, old = json.load(open(sys.argv[1]))["results"]
print(f"token, copy, this build: median {new['median'] * 1000:.3f} ms")
print(f"token, copy, baseline:   median {old['median'] * 1000:.3f} ms")
print(f"ratio: {new['median'] / old['median']:.3f}x")
PY
