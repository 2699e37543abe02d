#!/usr/bin/env bash
# operator-kit/evidence-gate: Stop hook (exit_policy block).
# Runs every criterion command configured in git config hpp.criterion (multi-valued; each value
# is an argv as a JSON array of strings, e.g. ["cargo","test","--quiet"]) through
# `git hpp evidence run`, so each run is recorded as an evidence bundle under refs/hpp/evidence/,
# and blocks the stop while any of them does not pass. With no criterion configured it allows
# the stop and says that nothing is configured. The host's cap on consecutive Stop blocks
# (Claude Code: 8) ends a criterion that can never pass.
# Usage: evidence-gate.sh [claude-code|codex]   (both hosts read {"decision":"block","reason":...})
set -u
cat >/dev/null

json_escape() {
  printf '%s' "$1" | tr '\t\r\n' '   ' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g'
}

# One JSON array of strings per line in, one string per line out; exit 1 when it is not one
# (\n, \r and \u escapes are refused: an argument cannot span lines here).
parse_argv='
{
  s = $0; n = length(s); i = 1; count = 0
  while (i <= n && substr(s, i, 1) ~ /[ \t]/) i++
  if (substr(s, i, 1) != "[") exit 1
  i++
  while (1) {
    while (i <= n && substr(s, i, 1) ~ /[ \t]/) i++
    c = substr(s, i, 1)
    if (c != "\"") exit 1
    i++; out = ""
    while (1) {
      if (i > n) exit 1
      c = substr(s, i, 1)
      if (c == "\\") {
        i++; e = substr(s, i, 1)
        if (e == "t") out = out "\t"
        else if (e == "\"" || e == "\\" || e == "/") out = out e
        else exit 1
        i++
      } else if (c == "\"") { i++; break }
      else { out = out c; i++ }
    }
    print out; count++
    while (i <= n && substr(s, i, 1) ~ /[ \t]/) i++
    c = substr(s, i, 1)
    i++
    if (c == ",") continue
    if (c == "]") break
    exit 1
  }
  while (i <= n && substr(s, i, 1) ~ /[ \t]/) i++
  if (i <= n || count == 0) exit 1
}'

criteria=$(git config --get-all hpp.criterion 2>/dev/null || true)
if [ -z "$criteria" ]; then
  printf '{"systemMessage":"%s"}\n' "evidence gate: no criterion is configured (git config --add hpp.criterion '[\\\"cargo\\\",\\\"test\\\"]'), so nothing was checked"
  exit 0
fi

failed=""
n=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  n=$((n + 1))
  if ! parsed=$(printf '%s\n' "$line" | awk "$parse_argv"); then
    failed="${failed} criterion ${n} (${line}) is not a JSON array of strings;"
    continue
  fi
  argv=()
  while IFS= read -r arg; do argv+=("$arg"); done <<<"$parsed"
  report=$(git hpp evidence run --id "stop-criterion-${n}" -- "${argv[@]}" </dev/null 2>&1)
  code=$?
  if [ "$code" -ne 0 ]; then
    failed="${failed} criterion ${n} (${argv[*]}): $(printf '%s' "$report" | head -n 2 | tr '\n' ' ');"
  fi
done <<<"$criteria"

if [ -n "$failed" ]; then
  printf '{"decision":"block","reason":"%s"}\n' "$(json_escape "Not done: a criterion does not pass.${failed} Fix the cause and stop again; each run is recorded (git hpp evidence list).")"
fi
exit 0
