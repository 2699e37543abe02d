#!/usr/bin/env bash
# hpp-run: how each hook script of this module runs `git hpp`: under a deadline shorter than
# the `timeout` its installed hook declares, and closed when git-hpp cannot answer.
# Usage: hpp-run.sh guard|stop|note NAME SECONDS GIT-HPP-ARGS...
#   guard  a PreToolUse guard: anything but exit 0 with no output or a JSON object, or exit 2
#          (git-hpp's own block), blocks the call (exit 2, one line on stderr). A host reads any
#          exit but 2 as "allow", so a hang, a crash, exit 1 and broken JSON all block here.
#   stop   a Stop gate: as guard, except that once a Stop hook already continued this turn
#          (stop_hook_active) a failure lets the stop go with a warning, so a broken install
#          cannot keep a session running forever.
#   note   a hook that only records or informs: a failure is a warning, never a block.
# git-hpp gets SECONDS (HPP_HOOK_DEADLINE may shorten it, never lengthen it); past them it is
# sent SIGTERM, then SIGKILL a second later, and the hook answers as above.
set -u
kind=$1 name=$2 limit=$3
shift 3
deadline=${HPP_HOOK_DEADLINE:-$limit}
case $deadline in '' | *[!0-9]*) deadline=$limit ;; esac
[ "$deadline" -le "$limit" ] || deadline=$limit
[ "$deadline" -ge 1 ] || deadline=1
tmp=

fail() {
  case $kind in
    note)
      printf '%s: %s; skipped\n' "$name" "$1" >&2
      exit 0 ;;
    stop)
      payload=
      [ -z "$tmp" ] || payload=$(cat "$tmp/in")
      if [[ $payload =~ \"stop_hook_active\"[[:space:]]*:[[:space:]]*true ]]; then
        printf '%s: %s; the stop goes unchecked, since a Stop hook already continued this turn\n' "$name" "$1" >&2
        exit 0
      fi
      printf '%s: %s; the stop is blocked\n' "$name" "$1" >&2
      exit 2 ;;
    *)
      printf '%s: %s; the call is blocked\n' "$name" "$1" >&2
      exit 2 ;;
  esac
}

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t hpp-hook 2>/dev/null) || { tmp=; fail "no temporary directory"; }
cat >"$tmp/in"
git hpp "$@" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
pid=$!
(
  trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  sleep "$deadline" &
  sleeper=$!
  wait "$sleeper"
  : >"$tmp/late"
  kill -TERM "$pid" 2>/dev/null
  sleep 1 &
  sleeper=$!
  wait "$sleeper"
  kill -KILL "$pid" 2>/dev/null
) </dev/null >/dev/null 2>&1 &
watch=$!
# Set only now: a child forked with it would run it if killed before it starts (bash runs the
# EXIT trap on SIGTERM), taking the directory from under this script.
trap 'rm -rf "$tmp"' EXIT
wait "$pid"
code=$?
kill "$watch" 2>/dev/null
wait "$watch" 2>/dev/null

[ ! -e "$tmp/late" ] || fail "git-hpp did not answer within ${deadline}s"
why=
IFS= read -r why <"$tmp/err"
case $code in
  0)
    if [ "$kind" != note ] && [ -s "$tmp/out" ]; then
      out=$(cat "$tmp/out")
      out=${out#"${out%%[![:space:]]*}"}
      out=${out%"${out##*[![:space:]]}"}
      case $out in
        '{'*'}') ;;
        *) fail "git-hpp exited 0 without a well-formed answer" ;;
      esac
    fi ;;
  2) ;;
  *) fail "git-hpp could not run (exit $code${why:+: $why})" ;;
esac
cat "$tmp/out"
cat "$tmp/err" >&2
[ "$kind" != note ] || exit 0
exit "$code"
