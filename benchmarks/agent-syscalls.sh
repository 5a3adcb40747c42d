#!/usr/bin/env bash
# The system calls `latchkey agent` makes per answered `latchkey token` (strace -f -c on the agent
# over 200 requests through LATCHKEY_AGENT), and the launcher's own: where the agent's time
# against the token copy goes (benchmarks/token.sh measures the times).
# Usage: benchmarks/agent-syscalls.sh path/to/release/latchkey   (latchkey-cli beside it; strace)
set -euo pipefail
cd "$(dirname "$0")/.."
latchkey="${1:?usage: benchmarks/agent-syscalls.sh path/to/latchkey}"
work=$(mktemp -d /tmp/agentprof.XXXXXX); chmod 700 $work
"${LATCHKEY_TEST_VENV:-$PWD/.venv-test}/bin/python" Tests/idp/run_idp.py --port 0 --name bench --data-dir "$work/idp" >"$work/idp.out" 2>"$work/idp.err" &
idp=$!
for _ in $(seq 1 100); do grep -q READY "$work/idp.out" 2>/dev/null && break; sleep 0.1; done
issuer=$(sed -n 's/^READY //p' "$work/idp.out")
mkdir -p "$work/providers.d"
printf 'display_name = "Bench"\nkind = "oidc"\nissuer = "%s"\nclient_id = "latchkey-test"\nredirect_path = "/oauth2redirect/a"\n' "$issuer" >"$work/providers.d/bench.toml"
printf 'benchmark passphrase\n' >"$work/passphrase" && chmod 600 "$work/passphrase"
export HOME="$work" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" LATCHKEY_PROVIDERS_DIR="$work/providers.d" LATCHKEY_PASSPHRASE_FILE="$work/passphrase" BROWSER="$PWD/Tests/idp/browser.sh"
$latchkey login bench 2>/dev/null
$latchkey unlock --for 10m 2>/dev/null
$latchkey agent --socket "$work/agent.sock" 2>"$work/agent.err" &
agent=$!
for _ in $(seq 1 100); do grep -q "listening on" "$work/agent.err" 2>/dev/null && break; sleep 0.1; done
for i in $(seq 1 20); do LATCHKEY_AGENT=$work/agent.sock $latchkey token bench >/dev/null; done
strace -f -c -p $agent -o $work/strace.txt &
st=$!
sleep 0.5
s=$(date +%s%N); for i in $(seq 1 200); do LATCHKEY_AGENT=$work/agent.sock $latchkey token bench >/dev/null; done; e=$(date +%s%N)
echo "200 agent requests: $(( (e-s)/200000 )) us each (under strace)"
kill -INT $st; sleep 1
head -30 $work/strace.txt
# client side
strace -c -f -o $work/client.txt env LATCHKEY_AGENT=$work/agent.sock $latchkey token bench >/dev/null
head -15 $work/client.txt
kill $agent $idp
rm -rf "$work"
