#!/usr/bin/env bash
# `latchkey token` with a valid token while the vault is unlocked, next to `cat` of a small file,
# the same answered by `latchkey agent` (LATCHKEY_AGENT), `latchkey mcp headers` (an agent's
# headers helper, answered from the same copy; issue 24 asks for at most 1.5x token),
# `latchkey aws-credential` against moto's STS (answered from the copy the full command kept, and
# from the agent, as on a forwarded host), and GitHub CLI's `gh auth token` (a
# peer, reading its own config file), in one hyperfine run:
# cold processes, median of 200 runs each, taken in ten rounds of turning order (below). oidc-agent's `oidc-token`, which needs a running agent and
# an account at a provider, is compared in benchmarks/commands.sh.
# Usage: benchmarks/token.sh [path/to/latchkey]   (default: a release build, built here; the
# full command line, latchkey-cli, must sit beside it)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
scripts/setup
venv="${LATCHKEY_TEST_VENV:-$PWD/.venv-test}"
latchkey="${1:-}"
if [ -z "$latchkey" ]; then
  swift build -c release --no-color-diagnostics --product latchkey >&2 && swift build -c release --no-color-diagnostics --product latchkey-cli >&2
  latchkey="$PWD/.build/release/latchkey"
fi

work=$(mktemp -d /tmp/latchkey-bench.XXXXXX)
chmod 700 "$work"
"$venv/bin/python" Tests/idp/run_idp.py --port 0 --name bench --data-dir "$work/idp" >"$work/idp.out" 2>"$work/idp.err" &
idp=$!
trap 'kill $idp 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q READY "$work/idp.out" 2>/dev/null && break; sleep 0.1; done
issuer=$(sed -n 's/^READY //p' "$work/idp.out")
mkdir -p "$work/providers.d"
printf 'display_name = "Bench"\nkind = "oidc"\nissuer = "%s"\nclient_id = "latchkey-test"\nredirect_path = "/oauth2redirect/a"\n' "$issuer" \
  >"$work/providers.d/bench.toml"
printf 'benchmark passphrase\n' >"$work/passphrase" && chmod 600 "$work/passphrase"
export HOME="$work" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" LATCHKEY_PROVIDERS_DIR="$work/providers.d" \
  LATCHKEY_PASSPHRASE_FILE="$work/passphrase" BROWSER="$PWD/Tests/idp/browser.sh"
"$latchkey" login bench 2>/dev/null
"$latchkey" unlock --for 10m 2>/dev/null
head -c 1024 /dev/urandom | base64 >"$work/small-file"
peers=()
command -v gh >/dev/null || { [ "$(id -u)" -eq 0 ] && apt-get install -y -qq gh >/dev/null 2>&1; } || true
if command -v gh >/dev/null; then
  # gh reads the token from its hosts file when no credential store holds one: no network.
  mkdir -p "$work/gh" && printf 'github.com:\n    oauth_token: gho_fake-benchmark-token\n    user: bench\n    git_protocol: https\n' >"$work/gh/hosts.yml"
  export GH_CONFIG_DIR="$work/gh"
  peers+=("gh auth token")
fi

# aws-credential as the AWS CLI runs it before every call, against moto's STS (from the test
# venv): the full command asks STS once and keeps the answer; the launcher answers the rest
# (issue 25 asks for at most 1.5x token).
moto_port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$venv/bin/python" -m moto.server -H 127.0.0.1 -p "$moto_port" >/dev/null 2>&1 &
moto=$!
trap 'kill $idp $moto 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$moto_port/moto-api/" >/dev/null 2>&1 && break; sleep 0.1; done
aws_credential="$latchkey aws-credential bench --role-arn arn:aws:iam::123456789012:role/bench --sts-endpoint http://127.0.0.1:$moto_port"
$aws_credential >/dev/null

# The agent answering the same request: both through env(1), so the comparison is the answer alone.
"$latchkey" agent --socket "$work/agent.sock" 2>"$work/agent.err" &
agent=$!
trap 'kill $idp $moto $agent 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q "listening on" "$work/agent.err" 2>/dev/null && break; sleep 0.1; done

commands=("cat $work/small-file" "$latchkey token bench" "$latchkey mcp headers bench" "$aws_credential"
  "env LATCHKEY_COPY=1 $latchkey token bench"
  "env LATCHKEY_AGENT=$work/agent.sock $latchkey token bench" "env LATCHKEY_AGENT=$work/agent.sock $aws_credential"
  "${peers[@]}")
# Ten rounds of 20 runs each, the commands' order turned by one every round, all runs of a command
# pooled: this machine slows and speeds up over seconds (a shared host), so one long batch per
# command would hand whichever runs later a slower machine, and the ratios would say so.
rounds=10
for round in $(seq 0 $((rounds - 1))); do
  n=${#commands[@]} turned=()
  for i in $(seq 0 $((n - 1))); do turned+=("${commands[$(((i + round) % n))]}"); done
  hyperfine -N --warmup 3 --runs 20 --export-json "$work/token-$round.json" "${turned[@]}" >/dev/null 2>&1
done
"$venv/bin/python" - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
pooled = {}
for round in range(rounds):
    for result in json.load(open(f"{work}/token-{round}.json"))["results"]:
        pooled.setdefault(result["command"], []).extend(result["times"])
results = {command: {"median": statistics.median(times), "min": min(times), "runs": len(times)} for command, times in pooled.items()}
cat = next(v for k, v in results.items() if "small-file" in k)
token = next(v for k, v in results.items() if k.endswith("latchkey token bench"))
print(f"{token['runs']} runs of each command, in {rounds} rounds of turning order")
print(f"cat small file:  median {cat['median'] * 1000:.2f} ms")
print(f"latchkey token:  median {token['median'] * 1000:.2f} ms  ({token['median'] / cat['median']:.2f}x cat, "
      f"{(token['median'] - cat['median']) * 1000:+.2f} ms)")
headers = next(v for k, v in results.items() if "mcp headers" in k)
print(f"latchkey mcp headers: median {headers['median'] * 1000:.2f} ms  ({headers['median'] / token['median']:.2f}x latchkey token; "
      f"fastest runs {headers['min'] / token['min']:.2f}x)")
aws = next(v for k, v in results.items() if "aws-credential" in k and "LATCHKEY_AGENT" not in k)
print(f"latchkey aws-credential: median {aws['median'] * 1000:.2f} ms  ({aws['median'] / token['median']:.2f}x latchkey token; "
      f"fastest runs {aws['min'] * 1000:.2f} and {token['min'] * 1000:.2f} ms, {aws['min'] / token['min']:.2f}x)")
copy = next(v for k, v in results.items() if "LATCHKEY_COPY" in k)
agent = next(v for k, v in results.items() if "LATCHKEY_AGENT" in k and "token bench" in k)
aws_agent = next(v for k, v in results.items() if "LATCHKEY_AGENT" in k and "aws-credential" in k)
print(f"token via env, from its copy:  median {copy['median'] * 1000:.2f} ms")
print(f"token via env, from the agent: median {agent['median'] * 1000:.2f} ms  ({agent['median'] / copy['median']:.2f}x the copy)")
print(f"aws-credential via env, from the agent: median {aws_agent['median'] * 1000:.2f} ms  "
      f"({aws_agent['median'] / agent['median']:.2f}x token from the agent)")
for command, result in results.items():
    if command.startswith("gh "):
        print(f"{command}:   median {result['median'] * 1000:.2f} ms  ({result['median'] / token['median']:.1f}x latchkey token)")
PY
"$latchkey" lock 2>/dev/null
