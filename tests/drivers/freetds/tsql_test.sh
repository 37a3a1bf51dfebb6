#!/usr/bin/env bash
# FreeTDS's tsql against `walden serve`.
#
# Usage: tsql_test.sh HOST PORT PASSWORD [DATABASE] (or $WALDEN_HOST, $WALDEN_PORT,
# $WALDEN_PASSWORD, $WALDEN_DATABASE). Runs script.sql in one tsql session (TDS 7.4, or the
# version $TDSVER names, which FreeTDS prefers to freetds.conf's; encryption off) and compares
# what tsql prints, results on stdout and server messages on stderr, with expected.out and
# expected.err; prints the differences and exits 1 when they differ.
#
# The server answers an older client in its version: sys.dm_exec_connections names the
# version LOGINACK carried, and below 7.3 DATE and DATETIME2 arrive as NVARCHAR text, which
# tsql prints as it is rather than in its own date format.
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
version="${TDSVER:-7.4}"
case "$version" in
    7.0) ack=0x07000000 ;;
    7.1) ack=0x71000001 ;;
    7.2) ack=0x72090002 ;;
    7.3) ack=0x730B0003 ;;
    7.4) ack=0x74000004 ;;
    *) echo "FAIL tsql_test.sh: no expectations for TDS version $version"; exit 1 ;;
esac
dates='s/Feb 29 2024 12:00AM\tFeb 29 2024 01:45PM/2024-02-29\t2024-02-29 13:45:56.1234567/'
case "$version" in
    7.0 | 7.1 | 7.2) ;;
    *) dates='' ;;
esac
expand() {
    sed -e "s/@DATABASE@/$database/g" -e "s/@LONG_TEXT@/$long_text/" \
        -e "s/@TDS_VERSION@/$ack/" -e "$dates" "$1"
}

expand "$here/script.sql" >"$work/script.sql"
status=0
TDSVER="$version" FREETDSCONF="$here/freetds.conf" tsql -H "$host" -p "$port" -U sa -P "$password" -o q \
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
echo "tsql (TDS $version): $(grep -c . "$work/expected.out") result lines and $(grep -c '^Msg' "$work/expected.err") errors as expected"
