#!/usr/bin/env bash
# The shell part of the GitHub Action (action.yml): install benchreport, audit the traces,
# print each fired finding as an annotation on the trace line it cites, append the Markdown
# summary to the job summary, write the kept documents into the output folder, set the
# step's outputs, and exit with the audit's code (0 clean, 1 a finding at or above fail-on,
# 2 could not audit).
#
# Everything arrives in the environment (action.yml maps its inputs there, so no input is
# ever pasted into shell code):
#   BR_TRACES       trace files or globs, separated by blanks or newlines (** allowed),
#                   relative to $GITHUB_WORKSPACE; a folder counts when it holds Parquet
#                   parts                                                          (required)
#   BR_FAIL_ON      error | warning | info | never                         (default: error)
#   BR_CLAIMS       published figures to check, one per line, as for --claim
#   BR_FORMAT       the input format (default: auto; custom when BR_MAPPING is set)
#   BR_MAPPING      a YAML mapping of a custom CSV's columns
#   BR_CONFIG       a TOML file of threshold overrides
#   BR_OUTPUTS      documents to keep: html,json,markdown,csv,badge,card
#                                                      (default: html,json,markdown)
#   BR_OUTPUT_DIR   where they go                                   (default: benchreport)
#   BR_ANNOTATIONS  true: findings as annotations; false: the terminal summary
#   BENCHREPORT_INSTALL  what pip installs (the action's checkout, a version spec); "skip"
#                   when benchreport is already installed for BENCHREPORT_PYTHON
#   BENCHREPORT_PYTHON   the interpreter (default: python, else python3)
#   GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT: set by the runner.
set -uo pipefail

fail() {  # a problem of the action's own inputs: one annotation, exit 2
  local message="${1//%/%25}"
  message="${message//$'\r'/%0D}"
  echo "::error title=benchreport::${message//$'\n'/%0A}"
  exit 2
}

prop() {  # a workflow-command property value, escaped as the runner reads it
  local value="${1//%/%25}"
  value="${value//$'\r'/%0D}"
  value="${value//$'\n'/%0A}"
  value="${value//:/%3A}"
  printf '%s' "${value//,/%2C}"
}

# globstar and associative arrays need bash 4 (macOS's /bin/bash is 3.2)
[ "${BASH_VERSINFO[0]}" -ge 4 ] || fail "bash ${BASH_VERSION} is too old; expected bash 4 or later"

PY="${BENCHREPORT_PYTHON:-}"
if [ -z "$PY" ]; then
  PY="$(command -v python || command -v python3 || true)"
fi
[ -n "$PY" ] || fail "no Python found; set python-version or BENCHREPORT_PYTHON"

cd "${GITHUB_WORKSPACE:-.}" || fail "cannot enter the workspace"

install="${BENCHREPORT_INSTALL:-benchreport}"
if [ "$install" != "skip" ]; then
  echo "::group::pip install benchreport"
  "$PY" -m pip install --disable-pip-version-check --quiet "$install" \
    || fail "pip could not install benchreport from '$install'"
  echo "::endgroup::"
fi

# The trace files: every pattern must match something, and a file matched twice is read once.
shopt -s globstar nullglob
files=()
declare -A seen=()
read -r -d '' -a patterns <<<"${BR_TRACES:-}"
[ "${#patterns[@]}" -gt 0 ] || fail "no traces given (the traces input)"
for pattern in "${patterns[@]}"; do
  # shellcheck disable=SC2206  # the pattern is meant to be globbed
  matched=($pattern)
  found=0
  for f in "${matched[@]}"; do
    f="${f#./}"  # annotations name files from the workspace root, as the diff does
    # a file, or a folder of Parquet parts (a trace written by convert --to x.parquet)
    if [ ! -f "$f" ] && ! { [ -d "$f" ] && compgen -G "$f/**/*.parquet" >/dev/null; }; then
      continue
    fi
    found=1
    if [ -z "${seen[$f]:-}" ]; then
      seen[$f]=1
      files+=("$f")
    fi
  done
  [ "$found" = 1 ] || fail "no file matches '$pattern' in the workspace"
done
shopt -u globstar nullglob

out="${BR_OUTPUT_DIR:-benchreport}"
case "$out" in *$'\n'* | *$'\r'*) fail "the output folder's name holds a line break" ;; esac
mkdir -p "$out" || fail "cannot create the output folder '$out'"
keep=",${BR_OUTPUTS:-html,json,markdown},"
keep="${keep// /}"
kept() { [[ "$keep" == *",$1,"* ]]; }

# The Markdown summary and the JSON verdict are always written (the job summary and the
# verdict output read them); they are removed at the end unless kept.
summary_md="$out/summary.md"
verdict_json="$out/verdict.json"
args=(audit "${files[@]}" --fail-on "${BR_FAIL_ON:-error}" --md "$summary_md"
      --json "$verdict_json")
if kept html; then args+=(-o "$out/report.html"); else args+=(--no-html); fi
kept csv && args+=(--csv "$out/runs.csv")
kept badge && args+=(--badge "$out/badge.svg")
kept card && args+=(--card "$out/card.html")
[ "${BR_ANNOTATIONS:-true}" = "false" ] || args+=(--output-format github)
format="${BR_FORMAT:-auto}"
if [ -n "${BR_MAPPING:-}" ]; then
  [ "$format" = "auto" ] && format="custom"
  args+=(--mapping "$BR_MAPPING")
fi
args+=(--format "$format")
[ -n "${BR_CONFIG:-}" ] && args+=(--config "$BR_CONFIG")
while IFS= read -r claim; do
  claim="${claim#"${claim%%[![:space:]]*}"}"
  [ -n "$claim" ] && args+=(--claim "$claim")
done <<<"${BR_CLAIMS:-}"

errors="$(mktemp)"
trap 'rm -f "$errors"' EXIT
"$PY" -m reporter "${args[@]}" 2>"$errors"
code=$?
cat "$errors" >&2

verdict="could-not-audit"
if [ "$code" -le 1 ] && [ -f "$verdict_json" ]; then
  verdict="$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1], encoding="utf-8"))["verdict"])' "$verdict_json")" \
    || verdict="could-not-audit"
fi

if [ "$verdict" = "could-not-audit" ]; then
  # each `path:line: what is wrong` as an annotation on that line
  while IFS= read -r line; do
    if [[ "$line" =~ ^(.+):([0-9]+):\ (.*)$ ]]; then
      message="${BASH_REMATCH[3]//%/%25}"
      echo "::error file=$(prop "${BASH_REMATCH[1]}"),line=${BASH_REMATCH[2]},title=benchreport could not audit::${message}"
    fi
  done <"$errors"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    {
      echo "### benchreport could not audit the traces"
      echo
      echo "Exit code $code: the step's log names each problem with its file and line."
    } >>"$GITHUB_STEP_SUMMARY"
  fi
elif [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$summary_md" ]; then
  cat "$summary_md" >>"$GITHUB_STEP_SUMMARY"
fi

kept markdown || rm -f "$summary_md"
kept json || rm -f "$verdict_json"

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "verdict=$verdict"
    echo "exit-code=$code"
    echo "output-dir=$out"
    for pair in html:report.html json:verdict.json markdown:summary.md csv:runs.csv \
                badge:badge.svg card:card.html; do
      name="${pair%%:*}"
      path="$out/${pair#*:}"
      if kept "$name" && [ -f "$path" ]; then echo "$name=$path"; else echo "$name="; fi
    done
  } >>"$GITHUB_OUTPUT"
fi
exit "$code"
