#!/usr/bin/env bash
# tests/dotnet/run-test.sh <test> [args...]: the .NET-side CTest entries (see CMakeLists.txt here).
#
#   setup                              scripts/dotnet-setup (the "dotnet" fixture)
#   ready <scenario> <config> <rt>     the sample reaches READY on .NET <rt> (11 | 10)
#   oracle <scenario> <config>         READY, createdump core, oracle, check against expected.json
#   core <createdump|gcore>            scenario 1 core made with that tool, oracle asserts C -> B -> A
#   running <mode>                     scenario 5 in --mode <mode>: core (createdump, or the runtime's
#                                      own createdump on crash), oracle checks the dispatcher chain
#   net10 <scenario>                   .NET 10 + DOTNET_RuntimeAsync=1: READY, core, array layout
#   descriptor-excerpt                 tests/dotnet/fixtures excerpt == what the pack's libcoreclr says
#   corelib-types                      fixture of CoreLib's async types == the pack's CoreLib metadata
#   cli-runtime                        $ASYNCDAC_CLI runtime --json <core> == descriptor.py on the pack
#
# Every process this script starts is killed on exit (trap), by pid. A missing runtime or tool is a
# failure, never a skip. Env: ASYNCDAC_DOTNET_DIR, ASYNCDAC_CLI.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
D=${ASYNCDAC_DOTNET_DIR:-$ROOT/build/dotnet}
export ASYNCDAC_DOTNET_DIR=$D
HERE=$ROOT/tests/dotnet

PIDS=()
TMP=""
cleanup() {
    local p
    for p in "${PIDS[@]}"; do
        kill -CONT "$p" 2>/dev/null || true
        kill -KILL "$p" 2>/dev/null || true
    done
    [[ -n $TMP ]] && rm -rf "$TMP"
    return 0
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

need_env() {
    [[ -f $D/env.sh ]] || fail "$D/env.sh missing: the dotnet fixture (scripts/dotnet-setup) did not run"
    # shellcheck disable=SC1091
    source "$D/env.sh"
    for f in "$DN_LIBCORECLR11" "$DN_DAC11" "$DN_CREATEDUMP11" "$DN_HOST" "$DN_ORACLE"; do
        [[ -e $f ]] || fail "missing $f (runtime pack or tool not set up)"
    done
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/asyncdac-dotnet.XXXXXX")
}

# start <scenario> <config> <runtime> [run-sample args...]: sets PID, READY
start() {
    local s=$1 cfg=$2 rt=$3
    shift 3
    local out
    out=$("$ROOT/scripts/run-sample" "$s" --config "$cfg" --runtime "$rt" --log "$TMP/$s.log" "$@") ||
        fail "$s ($cfg, .NET $rt) did not reach READY"
    READY=$(head -n1 <<<"$out")
    PID=$(tail -n1 <<<"$out")
    PIDS+=("$PID")
    echo "$READY"
}

oracle() { # oracle <core> <dac> <out.json>
    dotnet "$DN_ORACLE" "$1" --dac "$2" --out "$3" || fail "oracle failed on $1"
}

test_name=${1:-}
shift || true
case $test_name in
setup)
    start=$SECONDS
    "$ROOT/scripts/dotnet-setup"
    echo "dotnet-setup ok in $((SECONDS - start)) s: $D"
    ;;
ready)
    need_env
    s=$1 cfg=$2 rt=$3
    start "$s" "$cfg" "$rt"
    [[ $READY == *"scenario=$s "* ]] || fail "READY line lacks scenario=$s: $READY"
    if [[ $rt == 11 ]]; then want=11.0.0; else want=10.0.; fi
    [[ $READY == *"runtime=$want"* ]] || fail "READY line is not from .NET $want: $READY"
    kill -0 "$PID" 2>/dev/null || fail "$s exited after READY"
    echo "ok: $s $cfg on .NET $rt parked as pid $PID"
    ;;
oracle)
    need_env
    s=$1 cfg=$2
    extra=()
    [[ $s == nested ]] && extra+=(--strict-abc)
    start "$s" "$cfg" 11
    if [[ $s == running ]]; then
        extra+=(--tid "$(sed -n 's/.* tid=\([0-9]*\).*/\1/p' <<<"$READY")")
    fi
    "$ROOT/scripts/make-core" "$PID" "$TMP/$s.core" --createdump >/dev/null
    oracle "$TMP/$s.core" "$DN_DAC11" "$TMP/$s.json"
    python3 "$HERE/check_oracle.py" "$TMP/$s.json" "$ROOT/targets/dotnet/$s/expected.json" "${extra[@]}"
    ;;
core)
    need_env
    how=$1
    start nested Debug 11
    "$ROOT/scripts/make-core" "$PID" "$TMP/nested.core" "--$how" >/dev/null
    [[ -s $TMP/nested.core ]] || fail "no core"
    head -c 4 "$TMP/nested.core" | grep -q ELF || fail "$how core is not an ELF file"
    kill -0 "$PID" 2>/dev/null || fail "the process did not survive $how"
    oracle "$TMP/nested.core" "$DN_DAC11" "$TMP/nested.json"
    python3 "$HERE/check_oracle.py" "$TMP/nested.json" "$ROOT/targets/dotnet/nested/expected.json" --strict-abc
    ;;
running)
    need_env
    mode=$1
    core=$TMP/running.core
    case $mode in
    park | break)
        start running Debug 11 --mode "$mode"
        "$ROOT/scripts/make-core" "$PID" "$core" --createdump >/dev/null
        ;;
    sigstop)
        start running Debug 11 --mode sigstop
        for _ in $(seq 1 100); do
            st=$(awk '{print $3}' "/proc/$PID/stat" 2>/dev/null || true)
            [[ $st == T ]] && break
            sleep 0.05
        done
        [[ $st == T ]] || fail "the process did not stop itself (state '$st')"
        "$ROOT/scripts/make-core" "$PID" "$core" --gcore >/dev/null
        ;;
    failfast | throw | segv)
        DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=4 DOTNET_DbgMiniDumpName=$core \
            start running Debug 11 --mode "$mode"
        for _ in $(seq 1 600); do
            kill -0 "$PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$PID" 2>/dev/null && fail "--mode $mode did not crash the process"
        [[ -s $core ]] || { tail -n 5 "$TMP/running.log" >&2; fail "the runtime wrote no crash dump"; }
        ;;
    *) fail "unknown mode $mode" ;;
    esac
    tid=$(sed -n 's/.* tid=\([0-9]*\).*/\1/p' <<<"$READY")
    oracle "$core" "$DN_DAC11" "$TMP/running.json"
    python3 "$HERE/check_oracle.py" "$TMP/running.json" "$ROOT/targets/dotnet/running/expected.json" --tid "$tid" --mode "$mode"
    ;;
net10)
    need_env
    s=$1
    [[ -e $DN_DAC10 && -e $DN_CREATEDUMP10 ]] || fail "the SDK's .NET 10 runtime lacks libmscordaccore.so/createdump"
    start "$s" Release 10
    "$ROOT/scripts/make-core" "$PID" "$TMP/$s.core" --createdump >/dev/null
    oracle "$TMP/$s.core" "$DN_DAC10" "$TMP/$s.json"
    python3 "$HERE/check_oracle.py" "$TMP/$s.json" "$ROOT/targets/dotnet/$s/expected.json" --runtime 10
    ;;
descriptor-excerpt)
    need_env
    python3 "$HERE/descriptor.py" "$DN_LIBCORECLR11" --excerpt-out "$TMP/excerpt.json" >/dev/null
    diff -u "$HERE/fixtures/net11.0.0-async-descriptor-excerpt.json" "$TMP/excerpt.json" ||
        fail "the fixture differs from the pack's descriptor (regenerate with descriptor.py --excerpt-out)"
    echo "ok: descriptor excerpt matches $DN_LIBCORECLR11"
    ;;
corelib-types)
    need_env
    # Layout facts later code depends on, read from the real CoreLib's metadata (methods omitted).
    types=(System.Runtime.CompilerServices.Continuation System.Runtime.CompilerServices.ResumeInfo
        System.Runtime.CompilerServices.ContinuationFlags System.Runtime.CompilerServices.AsyncDispatcherInfo
        'System.Runtime.CompilerServices.AsyncProfiler+Info' 'System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask`1'
        System.Runtime.CompilerServices.RuntimeAsyncTaskContinuation
        'System.Runtime.CompilerServices.AsyncHelpers+ValueTaskSourceContinuation'
        'System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncAwaitState'
        'System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncStackState'
        System.Runtime.CompilerServices.AsyncHelpers System.Threading.Tasks.Task 'System.Threading.Tasks.Task`1')
    dotnet "$DN_ORACLE" metadata "$DN_RUNTIME11/System.Private.CoreLib.dll" "${types[@]}" | grep -v '^  method' >"$TMP/types.txt" ||
        fail "oracle metadata failed"
    if [[ ${ASYNCDAC_UPDATE_FIXTURES:-0} == 1 ]]; then
        cp "$TMP/types.txt" "$HERE/fixtures/net11.0.0-corelib-async-types.txt"
    fi
    diff -u "$HERE/fixtures/net11.0.0-corelib-async-types.txt" "$TMP/types.txt" ||
        fail "CoreLib's async types differ from the fixture (ASYNCDAC_UPDATE_FIXTURES=1 to regenerate)"
    echo "ok: CoreLib async type layouts match tests/dotnet/fixtures/net11.0.0-corelib-async-types.txt"
    ;;
cli-runtime)
    need_env
    cli=${ASYNCDAC_CLI:-}
    [[ -n $cli && -x $cli ]] || fail "ASYNCDAC_CLI ('$cli') is not an executable: build the asyncdac CLI first"
    start nested Debug 11
    "$ROOT/scripts/make-core" "$PID" "$TMP/nested.core" --createdump >/dev/null
    python3 "$HERE/descriptor.py" "$DN_LIBCORECLR11" --json-out "$TMP/expected.json" >/dev/null
    "$cli" runtime --json "$TMP/nested.core" >"$TMP/cli.json" || fail "'$cli runtime --json' failed"
    python3 "$HERE/compare_runtime.py" "$TMP/cli.json" "$TMP/expected.json"
    ;;
*)
    sed -n '2,17p' "${BASH_SOURCE[0]}" >&2
    exit 2
    ;;
esac
