#!/usr/bin/env bash
# The whole test suite of the `tables` workspace, with all of its set-up.
#
#   scripts/test.sh
#
# Steps: rustfmt check, clippy (-D warnings; also core and client without their
# optional field-type features), and meanwhile, in the background, install the
# pinned Azurite from npm
# (tools/azurite/package-lock.json), the pinned Azure Tables JS SDK
# (tools/js-sdk/package-lock.json, for the interop test), the Python SDK
# (tools/py-sdk, pinned with hashes) and the legacy clients (tools/js-legacy:
# Node's azure-storage by package-lock.json; tools/py-legacy: Python's
# azure-cosmosdb-table with hashes), start Azurite on a free
# 127.0.0.1 port and azurite-blob on another, build and start tables-server on a
# third (TABLES_TEST_SERVER_URL: the conformance suite and the typed matrix run on
# it too), run every
# test target and the doc tests with TABLES_TEST_AZURITE_URL pointing at it (the
# conformance suite, the typed tests and the remote engine's tests run against it)
# and TABLES_TEST_AZURITE_BLOB_URL at its blob service (the blob suite),
# run every example on the in-memory engine, on Azurite and on tables-server, stop
# the servers (always, also on Ctrl-C), print a summary.
#
# With CI=true a missing or broken Azurite fails the run; elsewhere the run goes on
# with a loud warning and the Azurite tests report themselves as skipped.
#
# Environment:
#   CI                       `true` (or 1/yes): Azurite is required.
#   CARGO_TARGET_DIR         honoured as usual.
#   TABLES_AZURITE_TIMEOUT   seconds to wait for Azurite to answer (default 60).
#   TABLES_EXAMPLE_TIMEOUT   seconds each example may run (default 300).
#   TABLES_TEST_TIMEOUT      seconds each cargo test step may run (default 1200):
#                            a hung test fails the run, not hangs it.
#   TABLES_TEST_JOBS         test binaries run at once (default 4).
#   TABLES_THOROUGH          1: the fault and randomized tests run their thorough
#                            case counts (tests/src/sizes.rs), not the CI-sized ones.

set -uo pipefail

# Incremental artifacts only pay off on a rebuild; a run of the whole suite on a clean
# clone would write gigabytes of them.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# trybuild builds its cases in a workspace of its own, without our [profile.dev]: the
# same line-tables-only setting, through the environment, keeps its output small.
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1

AZURITE_DIR="$ROOT/tools/azurite"
AZURITE_BIN="$AZURITE_DIR/node_modules/.bin/azurite-table"
AZURITE_BLOB_BIN="$AZURITE_DIR/node_modules/.bin/azurite-blob"
JS_SDK_DIR="$ROOT/tools/js-sdk"
PY_SDK_DIR="$ROOT/tools/py-sdk"
JS_LEGACY_DIR="$ROOT/tools/js-legacy"
PY_LEGACY_DIR="$ROOT/tools/py-legacy"
AZURITE_ACCOUNT="devstoreaccount1"
# The emulator's well-known development key (public, the same in every emulator).
AZURITE_KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
AZURITE_TIMEOUT="${TABLES_AZURITE_TIMEOUT:-60}"
EXAMPLE_TIMEOUT="${TABLES_EXAMPLE_TIMEOUT:-300}"
TEST_TIMEOUT="${TABLES_TEST_TIMEOUT:-1200}"
TEST_JOBS="${TABLES_TEST_JOBS:-4}"
# The test binaries that take longest, started first (the others follow in cargo's
# order).
SLOWEST_TESTS="ui_build,typed_upkeep_faults,typed_moves,typed_bulk,bulk_memory,typed_wide,typed_writes,typed_large,typed_repair,server_vs_azurite,tables_server,stream_memory"
# The typed matrix binaries whose Azurite and server tests run as shards of their
# own, beside the rest of the binary (each shard waits on one server process).
SPLIT_TESTS="typed_upkeep_faults,typed_moves,typed_bulk,typed_wide,typed_writes,typed_repair"
# The tests that time the servers' answers (a client timeout of one second, late
# deliveries): they run last, alone, on servers no other test loads.
ALONE_TESTS="typed_transport_faults"
EXAMPLES_PACKAGE="tables-examples"

case "${CI:-}" in
    true | TRUE | True | 1 | yes | YES) IS_CI=1 ;;
    *) IS_CI=0 ;;
esac

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/tables-test.XXXXXX")" || exit 1
AZURITE_PID=""
AZURITE_LOG=""
SERVER_PID=""
COSMOS_SERVER_PID=""
SERVER_LOG=""
AZURITE_BLOB_PID=""
AZURITE_BLOB_LOG=""
FAILED=0
KEEP_WORK_DIR=0
RUN_START=$SECONDS
SUMMARY=()

# ---------------------------------------------------------------------------
# Output helpers

say() { printf '\n==> %s\n' "$*"; }

warn() {
    printf '\n' >&2
    printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' >&2
    printf '!!! WARNING: %s\n' "$@" >&2
    printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' >&2
}

record() { # record <PASS|FAIL|SKIP|WARN> <step> <seconds>
    SUMMARY+=("$(printf '%-5s %-44s %5ss' "$1" "$2" "$3")")
    if [ "$1" = FAIL ]; then FAILED=1; fi
}

step() { # step <name> <command...>: runs the command, records the result
    local name="$1"
    shift
    say "$name: $*"
    local start=$SECONDS rc=0
    "$@" </dev/null || rc=$?
    step_result "$name" "$rc" "$((SECONDS - start))"
}

step_result() { # step_result <name> <exit status> <seconds>: records it, returns the status
    if [ "$2" -eq 0 ]; then
        record PASS "$1" "$3"
    else
        printf '\n--- step "%s" failed (exit %s) after %ss\n' "$1" "$2" "$3" >&2
        record FAIL "$1" "$3"
    fi
    return "$2"
}

# Azurite trouble: a failure under CI, a loud warning elsewhere.
azurite_trouble() { # azurite_trouble <step> <seconds> <message>
    if [ "$IS_CI" -eq 1 ]; then
        printf '\nERROR: %s (CI=true: Azurite is required, this is a failure)\n' "$3" >&2
        record FAIL "$1" "$2"
    else
        warn "$3" \
            "Continuing WITHOUT Azurite: the Azurite tests will be SKIPPED." \
            "This run proves nothing about the remote engine. Under CI=true this fails."
        record WARN "$1 (skipped remote tests)" "$2"
        KEEP_WORK_DIR=1
    fi
}

# ---------------------------------------------------------------------------
# Clean-up: always stop Azurite; keep the logs when something failed.

stop_pid() { # stop_pid <pid>: TERM, then KILL after 5 s
    local pid="$1" i
    [ -n "$pid" ] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null
        for i in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null
        fi
    fi
    wait "$pid" 2>/dev/null
}

# Stops both Azurite services (table and blob), whichever run.
stop_azurite() {
    stop_pid "$AZURITE_PID"
    AZURITE_PID=""
    stop_pid "$AZURITE_BLOB_PID"
    AZURITE_BLOB_PID=""
}

# Stops the run's tables-servers.
stop_server() {
    stop_pid "$SERVER_PID"
    SERVER_PID=""
    stop_pid "$COSMOS_SERVER_PID"
    COSMOS_SERVER_PID=""
}

cleanup() {
    local rc=$?
    # A child forked for a background command that is signalled before it execs
    # still runs this trap: only the script itself may clean up.
    [ "$BASHPID" = "$$" ] || exit "$rc"
    trap - EXIT INT TERM
    stop_installs
    stop_azurite
    stop_server
    if [ "$FAILED" -ne 0 ] || [ "$rc" -ne 0 ] || [ "$KEEP_WORK_DIR" -ne 0 ]; then
        local log
        for log in "$AZURITE_LOG" "$AZURITE_BLOB_LOG" "$SERVER_LOG"; do
            if [ -n "$log" ] && [ -s "$log" ]; then
                printf '\n--- Azurite log (%s), last 40 lines:\n' "$log" >&2
                tail -n 40 "$log" >&2
            fi
        done
        printf '\nLogs kept in %s\n' "$WORK_DIR" >&2
    else
        rm -rf "$WORK_DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'printf "\ninterrupted\n" >&2; exit 130' INT
trap 'printf "\nterminated\n" >&2; exit 143' TERM

# ---------------------------------------------------------------------------
# Installs in the background: Azurite, the SDKs and tmux wait on the network and the
# disk, the clippy steps on the CPU, so they run side by side. Each install's
# output and result are kept and shown (and recorded) when the run needs it.

INSTALLS="azurite js_sdk py_sdk legacy_clients tmux"
INSTALLS_PID=""

start_installs() {
    mkdir -p "$WORK_DIR/installs" || return 1
    (
        for what in $INSTALLS; do
            start=$SECONDS
            rc=0
            "install_$what" >"$WORK_DIR/installs/$what.log" 2>&1 </dev/null || rc=$?
            echo "$rc $((SECONDS - start))" >"$WORK_DIR/installs/$what.rc"
        done
    ) &
    INSTALLS_PID=$!
}

stop_installs() {
    [ -n "$INSTALLS_PID" ] || return 0
    # The installs run in a subshell: stop the command it runs too.
    pkill -TERM -P "$INSTALLS_PID" 2>/dev/null
    stop_pid "$INSTALLS_PID"
    INSTALLS_PID=""
}

# finish_install <what>: waits for that background install, prints its output and
# exits with its status; sets INSTALL_TOOK (its seconds).
finish_install() {
    local what="$1" result="$WORK_DIR/installs/$1.rc" rc
    INSTALL_TOOK=0
    while [ ! -f "$result" ]; do
        if ! kill -0 "$INSTALLS_PID" 2>/dev/null && [ ! -f "$result" ]; then
            echo "the background installs stopped before install_$what finished" >&2
            return 1
        fi
        sleep 0.2
    done
    cat "$WORK_DIR/installs/$what.log"
    read -r rc INSTALL_TOOK <"$result"
    return "$rc"
}

# install_step <name> <what>: as `step`, for a background install.
install_step() {
    local name="$1" rc=0
    say "$name (installed in the background)"
    finish_install "$2" || rc=$?
    step_result "$name" "$rc" "$INSTALL_TOOK"
}

# ---------------------------------------------------------------------------
# Azurite

# need_node <what for>: fails, saying so, unless node (18 or later) is on the PATH.
# The run needs it anyway: it runs Azurite and the JS SDK, and the script uses it
# for the little it can't do in bash (a free port, cargo's metadata).
need_node() {
    command -v node >/dev/null 2>&1 && return 0
    echo "node (18 or later) is needed to $1" >&2
    return 1
}

# Prints a port that was free on 127.0.0.1 a moment ago.
free_port() {
    need_node "pick a free port" || return 1
    node -e 'const server = require("net").createServer();
server.listen(0, "127.0.0.1", () => {
  console.log(server.address().port);
  server.close();
});'
}

lock_digest() { # lock_digest <dir>
    cat "$1/package.json" "$1/package-lock.json" | sha256sum | cut -d' ' -f1
}

# npm_ci_pinned <dir> <file it must install>: npm ci from <dir>'s lockfile, unless
# its node_modules already holds exactly that install.
npm_ci_pinned() {
    local dir="$1" installed="$2"
    need_node "install ${dir#"$ROOT"/}" || return 1
    if ! command -v npm >/dev/null 2>&1; then
        echo "npm is needed to install ${dir#"$ROOT"/}" >&2
        return 1
    fi
    echo "node $(node --version), npm $(npm --version)"
    local stamp="$dir/node_modules/.tables-lock-digest"
    if [ -e "$installed" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(lock_digest "$dir")" ]; then
        echo "${dir#"$ROOT"/}/node_modules already matches package-lock.json; not reinstalling"
        return 0
    fi
    # A throw-away npm cache: nothing is cached outside the repository.
    (cd "$dir" && npm ci --no-audit --no-fund --cache "$WORK_DIR/npm-cache") || return 1
    rm -rf "$WORK_DIR/npm-cache"
    [ -e "$installed" ] || {
        echo "npm ci succeeded but $installed is missing" >&2
        return 1
    }
    lock_digest "$dir" >"$stamp"
}

install_azurite() {
    npm_ci_pinned "$AZURITE_DIR" "$AZURITE_BIN"
}

# The official JS SDK, for the interop test (js_sdk_interop).
install_js_sdk() {
    npm_ci_pinned "$JS_SDK_DIR" "$JS_SDK_DIR/node_modules/@azure/data-tables/package.json"
}

# install_venv <dir> <module>: a virtual environment in <dir>/.venv, installed from
# <dir>/requirements.txt, every package pinned by hash, unless it already holds
# exactly that install; <module> must then import.
install_venv() {
    local dir="$1" module="$2" venv="$1/.venv" stamp digest
    if ! command -v python3 >/dev/null 2>&1; then
        echo "python3 is needed to install ${dir#"$ROOT"/}" >&2
        return 1
    fi
    echo "$(python3 --version)"
    stamp="$venv/.tables-requirements-digest"
    digest="$(sha256sum "$dir/requirements.txt" | cut -d' ' -f1)"
    if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
        echo "${dir#"$ROOT"/}/.venv already matches requirements.txt; not reinstalling"
        return 0
    fi
    rm -rf "$venv"
    python3 -m venv "$venv" || return 1
    # No cache outside the repository; every package and its hash from the file.
    "$venv/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check \
        --require-hashes --no-deps -r "$dir/requirements.txt" || return 1
    "$venv/bin/python" -c "import $module" || return 1
    echo "$digest" >"$stamp"
}

# The official Python SDK, for py_sdk_server and the other Python drives.
install_py_sdk() {
    install_venv "$PY_SDK_DIR" azure.data.tables
}

# The legacy clients, for legacy_sdk_server: Node's azure-storage (the retired
# storage SDK, pinned by package-lock.json) and Python's azure-cosmosdb-table
# (pinned with hashes).
install_legacy_clients() {
    npm_ci_pinned "$JS_LEGACY_DIR" "$JS_LEGACY_DIR/node_modules/azure-storage/package.json" &&
        install_venv "$PY_LEGACY_DIR" azure.cosmosdb.table.tableservice
}

# tmux, for the CLI's progress test (a real terminal read back with capture-pane):
# Debian's package, when the machine has none.
install_tmux() {
    if command -v tmux >/dev/null 2>&1; then
        echo "$(tmux -V) is there"
        return 0
    fi
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get install -y --no-install-recommends tmux ||
        { $sudo apt-get update -qq && $sudo apt-get install -y --no-install-recommends tmux; }
}

# start_azurite_service <table|blob>: starts that Azurite service on a free port;
# sets STARTED_PID, STARTED_LOG and STARTED_PORT.
start_azurite_service() {
    local service="$1" bin attempt port deadline
    case "$service" in
        table) bin="$AZURITE_BIN" ;;
        blob) bin="$AZURITE_BLOB_BIN" ;;
        *)
            echo "start_azurite_service: no service $service" >&2
            return 2
            ;;
    esac
    STARTED_PID=""
    for attempt in 1 2 3 4 5; do
        port="$(free_port)" || {
            echo "could not find a free port on 127.0.0.1" >&2
            return 1
        }
        STARTED_LOG="$WORK_DIR/azurite-$service-$attempt.log"
        echo "starting azurite-$service on 127.0.0.1:$port (attempt $attempt, log $STARTED_LOG)"
        "$bin" --inMemoryPersistence --disableTelemetry \
            "--${service}Host" 127.0.0.1 "--${service}Port" "$port" \
            >"$STARTED_LOG" 2>&1 </dev/null &
        STARTED_PID=$!
        deadline=$((SECONDS + AZURITE_TIMEOUT))
        while :; do
            sleep 0.25
            if ! kill -0 "$STARTED_PID" 2>/dev/null; then
                break # exited: port taken or a crash; the log says which
            fi
            if grep -qE "successfully (started|listens)" "$STARTED_LOG" 2>/dev/null &&
                (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                STARTED_PORT="$port"
                echo "Azurite $(azurite_version) $service service answers on 127.0.0.1:$port"
                return 0
            fi
            [ "$SECONDS" -lt "$deadline" ] || break
        done
        if kill -0 "$STARTED_PID" 2>/dev/null; then
            echo "azurite-$service did not answer within ${AZURITE_TIMEOUT}s" >&2
            stop_pid "$STARTED_PID"
            STARTED_PID=""
            return 1
        fi
        stop_pid "$STARTED_PID"
        STARTED_PID=""
        if grep -q "EADDRINUSE" "$STARTED_LOG" 2>/dev/null; then
            echo "port $port was taken meanwhile; trying another" >&2
            continue
        fi
        echo "azurite-$service exited during start-up:" >&2
        tail -n 20 "$STARTED_LOG" >&2
        return 1
    done
    echo "gave up after 5 port collisions" >&2
    return 1
}

# Starts azurite-table and azurite-blob, each on a free port; sets AZURITE_PORT and
# AZURITE_BLOB_PORT (and the PIDs and logs the clean-up uses).
start_azurite() {
    start_azurite_service table
    local rc=$?
    AZURITE_PID="$STARTED_PID"
    AZURITE_LOG="$STARTED_LOG"
    [ "$rc" -eq 0 ] || return "$rc"
    AZURITE_PORT="$STARTED_PORT"
    start_azurite_service blob
    rc=$?
    AZURITE_BLOB_PID="$STARTED_PID"
    AZURITE_BLOB_LOG="$STARTED_LOG"
    [ "$rc" -eq 0 ] || return "$rc"
    AZURITE_BLOB_PORT="$STARTED_PORT"
}

azurite_version() {
    node -p 'require(process.argv[1]).version' "$AZURITE_DIR/node_modules/azurite/package.json" 2>/dev/null ||
        echo "(unknown version)"
}

# ---------------------------------------------------------------------------
# tables-server

# Builds the workspace's binaries (tables-server) with the workspace's features, so
# the test build reuses the artifacts; sets SERVER_BIN.
build_server() {
    cargo build --workspace --bins || return 1
    local target_dir
    target_dir="$(cargo metadata --no-deps --format-version 1 |
        node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).target_directory)')" || return 1
    SERVER_BIN="$target_dir/debug/tables-server"
    [ -x "$SERVER_BIN" ] || {
        echo "the build did not produce $SERVER_BIN" >&2
        return 1
    }
}

# Starts the built tables-server on a free port (it prints the address it listens
# on), with any arguments given; sets SERVER_PID, SERVER_LOG and SERVER_PORT.
start_server() {
    local attempt port deadline
    for attempt in 1 2 3 4 5; do
        port="$(free_port)" || return 1
        SERVER_LOG="$WORK_DIR/tables-server${2:+-$2}-$attempt.log"
        echo "starting tables-server $* on 127.0.0.1:$port (attempt $attempt, log $SERVER_LOG)"
        "$SERVER_BIN" --host 127.0.0.1 --port "$port" --threads 2 "$@" >"$SERVER_LOG" 2>&1 </dev/null &
        SERVER_PID=$!
        deadline=$((SECONDS + 30))
        while kill -0 "$SERVER_PID" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
            if grep -q "listening on" "$SERVER_LOG" 2>/dev/null; then
                SERVER_PORT="$port"
                echo "tables-server answers on 127.0.0.1:$port"
                return 0
            fi
            sleep 0.1
        done
        stop_pid "$SERVER_PID"
        SERVER_PID=""
        if grep -qi "address already in use\|addrinuse" "$SERVER_LOG" 2>/dev/null; then
            echo "port $port was taken meanwhile; trying another" >&2
            continue
        fi
        echo "tables-server did not start:" >&2
        tail -n 20 "$SERVER_LOG" >&2
        return 1
    done
    echo "gave up after 5 port collisions" >&2
    return 1
}

# ---------------------------------------------------------------------------
# Examples

# Lists the [[example]] targets of the examples package, one name per line, from
# cargo's metadata.
list_examples() {
    need_node "read cargo's metadata" || return 1
    cargo metadata --no-deps --format-version 1 | node -e '
const meta = JSON.parse(require("fs").readFileSync(0, "utf8"));
for (const p of meta.packages) {
  if (p.name !== process.argv[1]) continue;
  for (const t of p.targets) if (t.kind.includes("example")) console.log(t.name);
}' "$EXAMPLES_PACKAGE"
}

# limited <seconds> <command...>: the command, stopped (with its children) when it
# runs longer, so a hung test cannot hold the run forever.
limited() {
    local seconds="$1"
    shift
    if command -v timeout >/dev/null 2>&1; then
        local rc=0
        timeout --kill-after=10 "$seconds" "$@" || rc=$?
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            echo "timed out after ${seconds}s: $*" >&2
        fi
        return "$rc"
    fi
    "$@"
}

# The examples are built once, with the whole workspace selected: the features are
# then the ones the test build unified, so the build reuses its artifacts. Built alone
# (`cargo run -p tables-examples`), tokio and the tables crates would be compiled a
# second time with fewer features, a second copy of the tree on disk.
build_examples() {
    cargo build --workspace --examples || return 1
    local target_dir
    target_dir="$(cargo metadata --no-deps --format-version 1 |
        node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).target_directory)')" || return 1
    EXAMPLES_DIR="$target_dir/debug/examples"
}

# run_example <name> <mem|azurite|server|cosmos>: the built example on the in-memory
# engine, on the run's Azurite, on the run's tables-server, or on its tables-server
# --profile cosmos (with Azurite's blob service beside them when it runs); the
# examples read TABLES_CONNECTION_STRING and TABLES_SERVICE.
run_example() {
    (
        case "$2" in
            mem) unset TABLES_CONNECTION_STRING ;;
            azurite) export TABLES_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$AZURITE_ACCOUNT;AccountKey=$AZURITE_KEY;TableEndpoint=$TABLES_TEST_AZURITE_URL;BlobEndpoint=$TABLES_TEST_AZURITE_BLOB_URL" ;;
            server)
                TABLES_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$AZURITE_ACCOUNT;AccountKey=$AZURITE_KEY;TableEndpoint=$TABLES_TEST_SERVER_URL"
                if [ -n "${TABLES_TEST_AZURITE_BLOB_URL:-}" ]; then
                    TABLES_CONNECTION_STRING="$TABLES_CONNECTION_STRING;BlobEndpoint=$TABLES_TEST_AZURITE_BLOB_URL"
                fi
                export TABLES_CONNECTION_STRING
                ;;
            cosmos)
                # The server playing Cosmos DB for Table; the examples tell the
                # remote engine so (TABLES_SERVICE), as a local address can't.
                export TABLES_SERVICE=cosmos
                export TABLES_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$AZURITE_ACCOUNT;AccountKey=$AZURITE_KEY;TableEndpoint=$TABLES_TEST_SERVER_COSMOS_URL${TABLES_TEST_AZURITE_BLOB_URL:+;BlobEndpoint=$TABLES_TEST_AZURITE_BLOB_URL}"
                ;;
            *)
                echo "run_example: no engine $2" >&2
                return 2
                ;;
        esac
        mkdir -p "$WORK_DIR/examples"
        limited "$EXAMPLE_TIMEOUT" "$EXAMPLES_DIR/$1" | tee "$WORK_DIR/examples/$1.$2.out"
    )
}

# same_log_tail: the log-tail example printed the same ten newest rows (its part 2)
# on the server as Azure Storage and as Cosmos DB for Table, whose results come in
# any order.
same_log_tail() {
    local azure="$WORK_DIR/examples/expense_log_tail.server.out"
    local cosmos="$WORK_DIR/examples/expense_log_tail.cosmos.out"
    local tail_azure tail_cosmos
    tail_azure="$(sed -n '/^2\./,/^$/p' "$azure")" || return 1
    tail_cosmos="$(sed -n '/^2\./,/^$/p' "$cosmos")" || return 1
    if [ -z "$tail_azure" ] || [ "$(printf '%s\n' "$tail_azure" | grep -c '^   #')" -ne 10 ]; then
        echo "no ten rows in part 2 of $azure" >&2
        return 1
    fi
    printf '%s\n' "$tail_azure"
    if [ "$tail_azure" != "$tail_cosmos" ]; then
        echo "the Cosmos profile printed another log tail:" >&2
        diff <(printf '%s\n' "$tail_azure") <(printf '%s\n' "$tail_cosmos") >&2
        return 1
    fi
}

# ---------------------------------------------------------------------------
# The run

printf 'tables test suite: %s (CI=%s)\n' "$ROOT" "${CI:-unset}"
printf 'work dir: %s\n' "$WORK_DIR"

# Every locked crate, for every platform (the msrv test reads their metadata offline;
# a build downloads only this platform's).
step "fetch the locked crates" cargo fetch --locked
start_installs
step "rustfmt check" cargo fmt --all -- --check
step "clippy -D warnings" cargo clippy --workspace --all-targets -- -D warnings
# The workspace build above turns on every optional field type (the tests crate asks
# for them); this checks the crates as a user gets them, without those features.
step "check without optional features" cargo clippy -p tables-core -p tables-client --all-targets -- -D warnings

# Azurite: install, start.
unset TABLES_TEST_AZURITE_URL TABLES_TEST_AZURITE_BLOB_URL
AZURITE_PORT=""
AZURITE_BLOB_PORT=""
say "install Azurite (tools/azurite, pinned by package-lock.json; in the background)"
if finish_install azurite; then
    record PASS "install Azurite" "$INSTALL_TOOK"
    say "start Azurite"
    start=$SECONDS
    if start_azurite; then
        record PASS "start Azurite" "$((SECONDS - start))"
        export TABLES_TEST_AZURITE_URL="http://127.0.0.1:$AZURITE_PORT/$AZURITE_ACCOUNT"
        export TABLES_TEST_AZURITE_BLOB_URL="http://127.0.0.1:$AZURITE_BLOB_PORT/$AZURITE_ACCOUNT"
        echo "TABLES_TEST_AZURITE_URL=$TABLES_TEST_AZURITE_URL"
        echo "TABLES_TEST_AZURITE_BLOB_URL=$TABLES_TEST_AZURITE_BLOB_URL"
    else
        azurite_trouble "start Azurite" "$((SECONDS - start))" "Azurite failed to start"
    fi
else
    azurite_trouble "install Azurite" "$INSTALL_TOOK" "Azurite could not be installed from npm"
fi

# tables-server: build, start.
unset TABLES_TEST_SERVER_URL TABLES_TEST_SERVER_COSMOS_URL
SERVER_BIN=""
say "build and start tables-server"
step "build tables-server" build_server
if [ -n "$SERVER_BIN" ]; then
    start=$SECONDS
    if start_server; then
        record PASS "start tables-server" "$((SECONDS - start))"
        export TABLES_TEST_SERVER_URL="http://127.0.0.1:$SERVER_PORT/$AZURITE_ACCOUNT"
        echo "TABLES_TEST_SERVER_URL=$TABLES_TEST_SERVER_URL"
    else
        record FAIL "start tables-server" "$((SECONDS - start))"
    fi
    # The same server playing Cosmos DB for Table: the conformance suite and the
    # typed matrix run on it as one more backend.
    main_pid="$SERVER_PID"
    start=$SECONDS
    if start_server --profile cosmos --order-seed 17; then
        record PASS "start tables-server --profile cosmos" "$((SECONDS - start))"
        COSMOS_SERVER_PID="$SERVER_PID"
        export TABLES_TEST_SERVER_COSMOS_URL="http://127.0.0.1:$SERVER_PORT/$AZURITE_ACCOUNT"
        echo "TABLES_TEST_SERVER_COSMOS_URL=$TABLES_TEST_SERVER_COSMOS_URL"
    else
        record FAIL "start tables-server --profile cosmos" "$((SECONDS - start))"
    fi
    SERVER_PID="$main_pid"
fi

install_step "install the JS SDK" js_sdk
install_step "install the Python SDK" py_sdk
install_step "install the legacy clients" legacy_clients
install_step "install tmux" tmux
# The test binaries are built first, then run side by side (TABLES_TEST_JOBS at a
# time): most of them wait on the servers, not on the CPU. The longest start first.
# The server's request parsers are fuzzed with 100,000 cases here, a million under
# TABLES_THOROUGH=1 (plain `cargo test` runs 20,000); the fault and randomized tests
# run their CI-sized counts unless TABLES_THOROUGH=1 (see tests/src/sizes.rs).
case "${TABLES_THOROUGH:-}" in
    1 | true | TRUE | yes | YES) FUZZ_CASES=1000000 ;;
    *) FUZZ_CASES=100000 ;;
esac
TEST_BUILD_JSON="$WORK_DIR/test-build.json"
step "build the tests" limited "$TEST_TIMEOUT" sh -c \
    'cargo test --workspace --all-targets --no-run --message-format=json-render-diagnostics >"$1"' \
    build-tests "$TEST_BUILD_JSON"
step "cargo test (all targets)" limited "$TEST_TIMEOUT" \
    env TABLES_SERVER_FUZZ_CASES="${TABLES_SERVER_FUZZ_CASES:-$FUZZ_CASES}" \
    python3 "$ROOT/scripts/run-test-binaries.py" --jobs "$TEST_JOBS" \
    --logs "$WORK_DIR/test-logs" --timeout "$TEST_TIMEOUT" --first "$SLOWEST_TESTS" \
    --split "$SPLIT_TESTS" --alone "$ALONE_TESTS" \
    "$TEST_BUILD_JSON"
step "cargo test (doc tests)" limited "$TEST_TIMEOUT" cargo test --workspace --doc

say "discover examples of $EXAMPLES_PACKAGE"
EXAMPLES_DIR=""
step "build the examples" build_examples
if [ -z "$EXAMPLES_DIR" ]; then
    echo "the examples did not build; not running them" >&2
elif examples="$(list_examples)" && [ -n "$examples" ]; then
    while IFS= read -r example; do
        step "example $example (mem)" run_example "$example" mem
        if [ -n "${TABLES_TEST_AZURITE_URL:-}" ]; then
            step "example $example (Azurite)" run_example "$example" azurite
        else
            record SKIP "example $example (Azurite)" 0
        fi
        if [ -z "${TABLES_TEST_SERVER_URL:-}" ]; then
            record FAIL "example $example (server): no server" 0
        elif [ "$example" = employee_photo ] && [ -z "${TABLES_TEST_AZURITE_BLOB_URL:-}" ]; then
            # Its photos live in a blob service, which the server does not serve.
            record SKIP "example $example (server): no blob service" 0
        else
            step "example $example (server)" run_example "$example" server
        fi
        if [ -z "${TABLES_TEST_SERVER_COSMOS_URL:-}" ]; then
            record FAIL "example $example (server, Cosmos profile): no server" 0
        elif [ "$example" = employee_photo ] && [ -z "${TABLES_TEST_AZURITE_BLOB_URL:-}" ]; then
            record SKIP "example $example (server, Cosmos profile): no blob service" 0
        else
            step "example $example (server, Cosmos profile)" run_example "$example" cosmos
        fi
    done <<<"$examples"
    if [ -n "${TABLES_TEST_SERVER_COSMOS_URL:-}" ]; then
        step "expense_log_tail: the same ten newest on Azure's and Cosmos's profile" same_log_tail
    fi
else
    echo "no examples found in package $EXAMPLES_PACKAGE" >&2
    record FAIL "discover examples" 0
fi

stop_azurite
stop_server

say "summary ($((SECONDS - RUN_START))s in all)"
if [ -n "$EXAMPLES_DIR" ]; then
    printf '  build output: %s\n' "$(du -sh "$EXAMPLES_DIR/../.." 2>/dev/null | cut -f1)"
fi
for line in "${SUMMARY[@]}"; do
    printf '  %s\n' "$line"
done
if [ -n "${TABLES_TEST_AZURITE_URL:-}" ]; then
    printf '  Azurite: %s, tables at %s, blobs at %s (stopped)\n' "$(azurite_version)" \
        "$TABLES_TEST_AZURITE_URL" "$TABLES_TEST_AZURITE_BLOB_URL"
else
    printf '  Azurite: NOT RUNNING; the Azurite tests were skipped\n'
fi
if [ -n "${TABLES_TEST_SERVER_URL:-}" ]; then
    printf '  tables-server: %s (stopped)\n' "$TABLES_TEST_SERVER_URL"
fi
if [ "$FAILED" -ne 0 ]; then
    printf '\nFAILED\n'
    exit 1
fi
printf '\nOK\n'
exit 0
