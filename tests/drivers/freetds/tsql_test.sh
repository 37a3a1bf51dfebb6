#!/usr/bin/env bash
# FreeTDS's tsql against `walden serve`.
#
# Usage: tsql_test.sh HOST PORT PASSWORD [DATABASE] (or $WALDEN_HOST, $WALDEN_PORT,
# $WALDEN_PASSWORD, $WALDEN_DATABASE). Runs script.sql in one tsql session (TDS 7.4,
# encryption off, see freetds.conf) and compares what tsql prints, results on stdout and server
# messages on stderr, with expected.out and expected.err; prints the differences and exits 1
# when they differ.
#
# tsql has no parameters and no transaction API of its own: the script covers types, a
# procedure with an OUTPUT parameter and a return status, BEGIN TRAN with a delayed COMMIT and
# a ROLLBACK, and the errors 102, 208, 8134 and 2627 each followed by a query on the same
# connection.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
host="${1:-${WALDEN_HOST:-127.0.0.1}}"
port="${2:-${WALDEN_PORT:-1433}}"
password="${3:-${WALDEN_PASSWORD:?usage: tsql_test.sh HOST PORT PASSWORD [DATABASE]}}"
database="${4:-${WALDEN_DATABASE:-drivers}}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The NVARCHAR(MAX) value the script builds: 'walden-' 3000 times, then 'é'.
long_text="$(printf 'walden-%.0s' $(seq 3000))é"
expand() {
    sed -e "s/@DATABASE@/$database/g" -e "s/@LONG_TEXT@/$long_text/" "$1"
}

expand "$here/script.sql" >"$work/script.sql"
status=0
FREETDSCONF="$here/freetds.conf" tsql -H "$host" -p "$port" -U sa -P "$password" -o q \
    <"$work/script.sql" >"$work/got.out" 2>"$work/got.err" || status=$?

expand "$here/expected.out" >"$work/expected.out"
expand "$here/expected.err" >"$work/expected.err"
failed=0
for stream in out err; do
    if ! diff -u "$work/expected.$stream" "$work/got.$stream" >"$work/diff.$stream"; then
        echo "FAIL tsql std$stream differs from expected.$stream (- expected, + got):"
        cut -c1-300 "$work/diff.$stream"
        failed=1
    fi
done
if [ "$status" -ne 0 ]; then
    echo "FAIL tsql exited with status $status"
    failed=1
fi
if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "tsql: $(grep -c . "$work/expected.out") result lines and $(grep -c '^Msg' "$work/expected.err") errors as expected"
