#!/usr/bin/env bash
# test-report.sh: the table at the end of scripts/test.sh. Usage:
#   scripts/test-report.sh REPORT_DIR
# REPORT_DIR holds one directory per ctest run that test.sh made (or chose
# not to make), each with:
#   meta        suite=, group=, labels= (space-separated), where=,
#               state= (ran | notrun), reason= (why not run), seconds=
#   labels.tsv  ctest test name, TAB, its label (ctest --show-only)
#   junit.xml   ctest --output-junit: one testcase per ctest test
#   json/*.json Criterion's --json report of each Criterion executable
# Counts are per Criterion test; a ctest test without a Criterion report
# (a script, or an executable that timed out or crashed before writing
# one) counts as one test, failed unless ctest says it passed or skipped.
# Criterion marks the tests its filter left out as skipped without a
# reason: they are "not run" (the nested rig's subset), not skips.
# Prints the table, then each failure and each skip with its reason.
# Exit status: 0 when every run that ran had no failure, 1 otherwise.
set -euo pipefail

[ $# -eq 1 ] && [ -d "$1" ] || {
	echo "usage: $0 REPORT_DIR" >&2
	exit 2
}
ROOT=$1
FILTERED="The test was skipped."

meta() { sed -n "s/^$2=//p" "$1/meta" | head -1; }

# One line per test: label TAB status TAB ctest-name TAB test TAB reason,
# status one of pass fail skip notrun.

# salvage LABEL CTEST JSON: the records of a Criterion report that is not
# valid JSON, from its layout (suite names at 6 spaces of indent, test
# names and statuses at 10); fails if it finds no test.
salvage() {
	awk -v l="$1" -v c="$2" '
		/^      "name": "/ { split($0, q, "\""); suite = q[4] }
		/^          "name": "/ { split($0, q, "\""); test = q[4] }
		/^          "status": "/ {
			split($0, q, "\"")
			st = q[4] == "PASSED" ? "pass" : q[4] == "SKIPPED" ? "skip" : "fail"
			msg = st == "pass" ? "" : "(its report is not valid JSON: messages in the log)"
			printf "%s\t%s\t%s\t%s/%s\t%s\n", l, st, c, suite, test, msg
			n++
		}
		END { exit n ? 0 : 1 }' "$3"
}

records() {
	local d=$1 n i name status msg out label json
	n=$(xmllint --xpath 'count(//testcase)' "$d/junit.xml" 2>/dev/null || echo 0)
	for ((i = 1; i <= n; i++)); do
		name=$(xmllint --xpath "string(//testcase[$i]/@name)" "$d/junit.xml")
		status=$(xmllint --xpath "string(//testcase[$i]/@status)" "$d/junit.xml")
		label=$(awk -F'\t' -v t="$name" '$1 == t { print $2; exit }' "$d/labels.tsv")
		label=${label:-?}
		json=$d/json/$name.json
		if [ -s "$json" ] && jq -e . "$json" >/dev/null 2>&1; then
			jq -r --arg l "$label" --arg c "$name" --arg f "$FILTERED" '
				.test_suites[] as $s | $s.tests[] |
				[$l,
				 (if .status == "PASSED" then "pass"
				  elif .status == "SKIPPED" then
					(if (.messages // []) == [$f] then "notrun" else "skip" end)
				  else "fail" end),
				 $c, ($s.name + "/" + .name),
				 ((.messages // []) | join(" ") | gsub("[\t\n]"; " "))]
				| @tsv' "$json"
			# ctest failed it, Criterion saw no failing test: the
			# executable's exit status (a sanitizer report at exit).
			if [ "$status" = fail ] &&
				[ "$(jq '[.failed, .errored] | add' "$json")" = 0 ]; then
				printf '%s\tfail\t%s\t%s\t%s\n' "$label" "$name" "$name" \
					"non-zero exit with no failing test (sanitizer report at exit?)"
			fi
			continue
		fi
		# Criterion 2.4 writes messages unescaped: a guest's console
		# line with a carriage return makes the report invalid JSON.
		# Its fixed layout still gives each test's name and status.
		if [ -s "$json" ] && salvage "$label" "$name" "$json"; then
			continue
		fi
		case $status in
		run) printf '%s\tpass\t%s\t%s\t\n' "$label" "$name" "$name" ;;
		notrun)
			msg=$(xmllint --xpath "string(//testcase[$i]/skipped/@message)" "$d/junit.xml")
			if [[ $msg == SKIP_RETURN_CODE=* ]]; then
				out=$(xmllint --xpath "string(//testcase[$i]/system-out)" "$d/junit.xml" |
					grep -m1 '^SKIP' | tr '\t' ' ' || true)
				printf '%s\tskip\t%s\t%s\t%s\n' "$label" "$name" "$name" "${out:-$msg}"
			else
				printf '%s\tfail\t%s\t%s\t%s\n' "$label" "$name" "$name" "not run: $msg"
			fi
			;;
		*)
			printf '%s\tfail\t%s\t%s\t%s\n' "$label" "$name" "$name" \
				"no per-test report (timed out or crashed)"
			;;
		esac
	done
	# Tests of the label that this ctest run left out (the rig's subset,
	# or the user's ctest arguments): one each.
	awk -F'\t' '{ print $1 "\t" $2 }' "$d/labels.tsv" | while IFS=$'\t' read -r name label; do
		grep -q "<testcase name=\"$name\"" "$d/junit.xml" 2>/dev/null ||
			printf '%s\tnotrun\t%s\t%s\t%s\n' "$label" "$name" "$name" "not in this run"
	done
}

bad=0
rows=$(mktemp)
details=$(mktemp)
trap 'rm -f "$rows" "$details"' EXIT
for d in "$ROOT"/*/; do
	d=${d%/}
	[ -f "$d/meta" ] || continue
	suite=$(meta "$d" suite)
	where=$(meta "$d" where)
	state=$(meta "$d" state)
	secs=$(meta "$d" seconds)
	for label in $(meta "$d" labels); do
		if [ "$state" != ran ]; then
			printf '%s\t%s\t%s\t-\t-\t-\t-\t-\n' "$suite" "$label" \
				"not run ($(meta "$d" reason))" >>"$rows"
			continue
		fi
		recs=$(records "$d" | awk -F'\t' -v l="$label" '$1 == l')
		count() { printf '%s\n' "$recs" | awk -F'\t' -v s="$1" '$2 == s' | grep -c . || true; }
		p=$(count pass)
		f=$(count fail)
		s=$(count skip)
		nr=$(count notrun)
		[ "$f" = 0 ] || bad=1
		if [ $((p + f + s)) = 0 ]; then
			bad=1
			f="0 (none ran)"
		fi
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$suite" "$label" \
			"$where" "$p" "$f" "$s" "$nr" "${secs:-?} s" >>"$rows"
		# One line each; the whole output is in ctest's log above.
		printf '%s\n' "$recs" | awk -F'\t' -v s="$suite" '
			{ m = length($5) > 160 ? substr($5, 1, 157) "..." : $5 }
			$2 == "fail" { printf "  FAILED  %s %s %s: %s: %s\n", s, $1, $3, $4, m }
			$2 == "skip" { printf "  skipped %s %s %s: %s: %s\n", s, $1, $3, $4, m }' \
			>>"$details"
	done
	[ "$state" = ran ] || [ "$(meta "$d" required)" != 1 ] || bad=1
done

echo "=== results: per Criterion test (a ctest test without a Criterion report counts as one)"
{
	printf 'suite\tlabel\twhere\tpassed\tfailed\tskipped\tnot run\ttime\n'
	cat "$rows"
} | column -t -s $'\t'
if [ -s "$details" ]; then
	echo "--- failures, and skips with their reasons:"
	sort "$details"
fi
echo "(time: wall time of the ctest run, all of its labels together; not run:"
echo " tests outside the nested rig's subset, or the ASan suite's Linux subset; see docs/testing.md)"
exit "$bad"
