#!/usr/bin/env bash
# Vault costs: unlock (scrypt), open + decrypt + decode of 1,000 accounts, one save. Medians of 21.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
swift build -c release --no-color-diagnostics --product latchkey-vault-stress >&2
work=$(mktemp -d /tmp/latchkey-vault-bench.XXXXXX)
chmod 700 "$work"
printf 'benchmark passphrase\n' >"$work/passphrase" && chmod 600 "$work/passphrase"
LATCHKEY_PASSPHRASE_FILE="$work/passphrase" .build/release/latchkey-vault-stress bench "$work/vault" 1000 21
rm -rf "$work"
