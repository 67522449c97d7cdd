#!/usr/bin/env bash
# The public API against the baseline recorded in .ci/api-baseline (README, "Versioning").
#
# Fails when:
# - `swift package diagnose-api-breaking-changes` reports a breaking change between the baseline commit and
#   this tree, other than a new case of an enum that the versioning policy lets grow in a minor version;
# - CHANGELOG.md does not name the baseline commit under a "### Breaking" heading (moving the baseline is how
#   a deliberate break is recorded: the breaking commit becomes the baseline, in a later commit that also
#   adds the "Breaking" entry naming it);
# - the baseline commit is not in this clone, or the check itself could not run;
# - Compatibility/, a fresh app package that calls deprecated API, does not build, prints no deprecation
#   warning, or prints any other warning (a shim that stopped working or stopped saying what replaces it).
# Usage: bash .ci/api-check.sh   (from anywhere; builds in .build like `swift build`)
set -euo pipefail
cd "$(dirname "$0")/.."

# Enums whose switches must have a `default:` (README, "Versioning"): a new case is not a break.
growable_enums='NetworkError|AuthEvent|RequestBody'

baseline="$(sed -e 's/#.*//' .ci/api-baseline | tr -d '[:space:]')"
if ! [[ "$baseline" =~ ^[0-9a-f]{40}$ ]]; then
  echo "API check: .ci/api-baseline must hold one full commit hash (found '$baseline')"
  exit 1
fi
if ! git cat-file -e "$baseline^{commit}" 2>/dev/null && [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  git fetch --quiet --unshallow || true   # a shallow clone: the baseline is older than its history
fi
if ! git cat-file -e "$baseline^{commit}" 2>/dev/null; then
  echo "API check: the baseline commit $baseline is not in this clone"
  exit 1
fi

short="${baseline:0:7}"
if ! awk -v short="$short" '
    /^## / { breaking = 0 }
    /^### / { breaking = ($0 ~ /^### Breaking/) }
    breaking && index($0, short) { found = 1 }
    END { exit !found }' CHANGELOG.md; then
  echo "API check: CHANGELOG.md names the baseline $short under no '### Breaking' heading."
  echo "Moving the baseline records a breaking change: say what breaks, under '### Breaking', naming $short."
  exit 1
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
swift package diagnose-api-breaking-changes "$baseline" --products Networking NetworkingTestSupport >"$log" 2>&1 || status=$?
if ! grep -qE 'breaking changes? detected in Networking:?$' "$log"; then
  cat "$log"
  echo "API check: diagnose-api-breaking-changes did not run to the end (exit $status)"
  exit 1
fi
grep -E 'breaking changes? detected in ' "$log" || true
breaks="$(grep -F 'API breakage:' "$log" || true)"
allowed="$(printf '%s\n' "$breaks" | grep -E "enumelement ($growable_enums)\.[A-Za-z0-9_]+ has been added as a new enum case" || true)"
unallowed="$(printf '%s\n' "$breaks" | grep -vE "enumelement ($growable_enums)\.[A-Za-z0-9_]+ has been added as a new enum case" | grep . || true)"
if [ -n "$allowed" ]; then
  echo "New cases of enums that may grow in a minor version (not breaks; record them under 'Added'):"
  printf '%s\n' "$allowed"
fi
if [ -n "$unallowed" ]; then
  echo "API check: breaking changes against the baseline $short:"
  printf '%s\n' "$unallowed"
  echo "Keep the old API as a deprecated shim (@available(*, deprecated, renamed:/message:)) instead; if the break is"
  echo "deliberate (a new major version), record it: a '### Breaking' entry in CHANGELOG.md and the breaking commit as"
  echo "the new baseline in .ci/api-baseline (README, 'Versioning')."
  exit 1
fi
echo "API check: no breaking change against the baseline $short"

echo "== deprecated API still compiles, with deprecation warnings only (Compatibility/)"
touch Compatibility/Sources/OldAPIApp/main.swift   # compiled again, so its warnings are printed again
swift build --package-path Compatibility >"$log" 2>&1 || { cat "$log"; echo "API check: Compatibility/ does not build"; exit 1; }
warnings="$(grep -E '^/.*/Compatibility/Sources/.*: warning: ' "$log" | sort -u || true)"
printf '%s\n' "$warnings" | grep . || true
if ! printf '%s\n' "$warnings" | grep -q 'deprecated'; then
  echo "API check: Compatibility/ printed no deprecation warning: does it still call the deprecated API?"
  exit 1
fi
if printf '%s\n' "$warnings" | grep . | grep -vq 'deprecated'; then
  echo "API check: Compatibility/ printed warnings other than deprecations"
  exit 1
fi
echo "API check: the deprecated API compiles, with deprecation warnings"
