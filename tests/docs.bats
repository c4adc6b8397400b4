#!/usr/bin/env bats
# The man pages (docs/gpuspy.8, docs/gpuspy-CMD.8) and the bash completion
# (docs/gpuspy.bash-completion) against what the binary says: its commands, each command's
# --help and `report --list`. No root, no BPF.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	WORK=$(mktemp -d)
	DOCS=$ROOT/docs
}

teardown() {
	rm -rf "$WORK"
}

# The commands `gpuspy --help` lists, as cli.bats reads them.
listed_commands() {
	"$GPUSPY" --help | awk '/^commands:$/ { on = 1; next } on && /^$/ { exit } on { print $1 }'
}

# The long options a text names, one per line, sorted: roff's \- read as '-', fonts dropped.
long_options() {
	sed -e '/^\.\\"/d' -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' "$@" |
		grep -oE -- '--[a-z][a-z-]*' | sort -u
}

# The long options of `gpuspy CMD --help` ("" for gpuspy's own): its text before "examples:"
# (the examples also run other commands: `gpuspy report ... --report` in record's).
help_options() {
	"$GPUSPY" ${1:+"$1"} --help | sed '/^examples:/,$d' | long_options
}

# Prints what a page misses of the long options of `gpuspy CMD --help` ("" for gpuspy's own
# --help), and, with "strict", the long options it names that the help does not; fails if any.
check_page_options() {
	local cmd=$1 page=$2 strict=${3:-} missing extra

	help_options "$cmd" > "$WORK/help.opts"
	[ -s "$WORK/help.opts" ] || {
		echo "no options in gpuspy $cmd --help"
		return 1
	}
	long_options "$page" > "$WORK/page.opts"
	missing=$(comm -23 "$WORK/help.opts" "$WORK/page.opts" | tr '\n' ' ')
	extra=$(comm -13 "$WORK/help.opts" "$WORK/page.opts" | tr '\n' ' ')
	[ -z "$missing" ] || echo "$page misses $missing(in gpuspy $cmd --help)"
	[ -z "$strict" ] || [ -z "$extra" ] || echo "$page names $extra(not in gpuspy $cmd --help)"
	[ -z "$missing" ] && { [ -z "$strict" ] || [ -z "$extra" ]; }
}

# COMPREPLY of _gpuspy for the words given (the last one is being completed), one per line.
complete_words() {
	# shellcheck source=/dev/null
	source "$DOCS/gpuspy.bash-completion"
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_gpuspy
	[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}"
}

@test "every command gpuspy --help lists has a section 8 man page, and every page renders without a warning" {
	require_cmd groff
	run -0 listed_commands
	mapfile -t cmds <<< "$output"
	[ "${#cmds[@]}" -ge 5 ]
	pages=("$DOCS/gpuspy.8")
	for cmd in "${cmds[@]}"; do
		pages+=("$DOCS/gpuspy-$cmd.8")
	done
	# no page for a command that is not there any more
	for page in "$DOCS"/gpuspy-*.8; do
		[[ " ${pages[*]} " == *" $page "* ]] || {
			echo "$page: no such command in gpuspy --help"
			false
		}
	done
	for page in "${pages[@]}"; do
		echo "$page"
		[ -f "$page" ]
		name=$(basename "$page" .8)
		# section 8, as bpftool's: the header says so
		th=$(sed -n 's/^\.TH //p' "$page")
		echo ".TH $th"
		[[ $th =~ ^([^\ ]+)\ 8\ [0-9]{4}-[0-9]{2}-[0-9]{2}\ gpuspy\ \"System\ Manager\'s\ Manual\"$ ]]
		[ "${BASH_REMATCH[1]//\\/}" = "${name^^}" ]
		for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
			grep -qx "\.SH $section" "$page" || {
				echo "$page: no $section section"
				false
			}
		done
		# NAME: "gpuspy-cmd \- what it does"
		sed 's/\\-/-/g' "$page" | grep -q "^$name - [a-zA-Z]"
		# every warning groff has (-ww), at man's usual width and a narrow one
		run -0 env LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page"
		echo "$output"
		[ -z "$output" ]
		if command -v man >/dev/null; then
			for width in 80 60; do
				# shellcheck disable=SC2016 # $1 is for the inner shell
				run -0 env LC_ALL=C.UTF-8 MANWIDTH=$width \
					sh -c 'man --warnings -l "$1" 2>&1 >/dev/null' sh "$page"
				echo "$output"
				[ -z "$output" ]
			done
		fi
	done
}

@test "every long option of each command's --help is in its man page, and no other" {
	run -0 listed_commands
	mapfile -t cmds <<< "$output"
	for cmd in "${cmds[@]}"; do
		check_page_options "$cmd" "$DOCS/gpuspy-$cmd.8" strict
	done
	# gpuspy.8: gpuspy's own --help (it also names other commands' options)
	check_page_options "" "$DOCS/gpuspy.8"
}

@test "the option check fails when a page misses an option, or names one --help does not" {
	# --no-follow taken out of a copy of record's page: each of its lines goes
	grep -v -- 'no\\-follow' "$DOCS/gpuspy-record.8" > "$WORK/gpuspy-record.8"
	run -1 check_page_options record "$WORK/gpuspy-record.8" strict
	[ "$output" = "$WORK/gpuspy-record.8 misses --no-follow (in gpuspy record --help)" ]
	# --group-by-stack does not stand for --group-by
	sed -e 's/\\-\\-group\\-by /\\-\\-group\\-by\\-stack /' -e 's/\\-\\-group\\-by$/\\-\\-group\\-by\\-stack/' \
		"$DOCS/gpuspy-report.8" > "$WORK/gpuspy-report.8"
	run -1 check_page_options report "$WORK/gpuspy-report.8" strict
	[ "$output" = "$WORK/gpuspy-report.8 misses --group-by (in gpuspy report --help)" ]
	# an option of another command
	printf '.TP\n.B \\-\\-no\\-python\n' | cat "$DOCS/gpuspy-top.8" - > "$WORK/gpuspy-top.8"
	run -1 check_page_options top "$WORK/gpuspy-top.8" strict
	[ "$output" = "$WORK/gpuspy-top.8 names --no-python (not in gpuspy top --help)" ]
}

@test "gpuspy-report.8 describes every report of report --list" {
	run -0 "$GPUSPY" report --list
	reports=$(echo "$output" | awk '/^[a-z]/ { print $1 }')
	[ "$(echo "$reports" | wc -l)" -ge 20 ]
	for r in $reports; do
		grep -qx "\.B ${r}" "$DOCS/gpuspy-report.8" || {
			echo "gpuspy-report.8: no entry for $r"
			false
		}
	done
}

@test "completion: command names" {
	run -0 complete_words gpuspy re
	[ "$output" = "$(printf 'record\nreport')" ]
	run -0 complete_words gpuspy ""
	[ "$(echo "$output" | sort | tr '\n' ' ')" = "$(listed_commands | sort | tr '\n' ' ')" ]
	# the command is found after gpuspy's own options
	run -0 complete_words gpuspy --version ""
	[ "$output" = "-v" ]
}

@test "completion: each command's long options are those of its --help" {
	run -0 listed_commands
	mapfile -t cmds <<< "$output"
	for cmd in "${cmds[@]}"; do
		help_options "$cmd" > "$WORK/help.opts"
		run -0 complete_words gpuspy "$cmd" --
		echo "$output" | sort -u > "$WORK/completed.opts"
		diff -u "$WORK/help.opts" "$WORK/completed.opts"
	done
	# record --no-<TAB>: every --no-* option of record --help
	run -0 complete_words gpuspy record --no-
	help_options record | grep -- '^--no-' > "$WORK/help.no"
	[ "$(wc -l < "$WORK/help.no")" -ge 6 ]
	echo "$output" | sort > "$WORK/completed.no"
	diff -u "$WORK/help.no" "$WORK/completed.no"
}

@test "completion: report names, from gpuspy report --list when gpuspy can be run, else the static list" {
	"$GPUSPY" report --list | awk '/^[a-z]/ { print $1 }' | sort > "$WORK/registry"
	# no gpuspy to run: the static list, which must be the registry's
	PATH=/usr/bin:/bin run -0 complete_words gpuspy report --report ""
	echo "$output" | sort > "$WORK/static"
	diff -u "$WORK/registry" "$WORK/static"
	PATH=/usr/bin:/bin run -0 complete_words gpuspy report --report cuda_
	[[ $'\n'"$output"$'\n' == *$'\n'cuda_api_sum$'\n'* ]]
	[[ $'\n'"$output"$'\n' != *$'\n'osrt_sum$'\n'* ]]
	# gpuspy on PATH: what its report --list says (a stand-in with a report of its own)
	mkdir "$WORK/bin"
	cat > "$WORK/bin/gpuspy" <<-EOF
		#!/bin/sh
		[ "\$1 \$2" = "report --list" ] || exit 2
		"$GPUSPY" report --list
		echo 'cuda_zzz_test          a report only this gpuspy has'
	EOF
	chmod +x "$WORK/bin/gpuspy"
	PATH=$WORK/bin:$PATH run -0 complete_words gpuspy report -r cuda_
	[[ $'\n'"$output"$'\n' == *$'\n'cuda_api_sum$'\n'* ]]
	[[ $'\n'"$output"$'\n' == *$'\n'cuda_zzz_test$'\n'* ]]
	# the gpuspy named by its path
	run -0 complete_words "$GPUSPY" report --report cuda_
	[[ $'\n'"$output"$'\n' == *$'\n'cuda_api_sum$'\n'* ]]
	# a list: the last name is completed, the ones before kept
	run -0 complete_words gpuspy report --report osrt_sum,cuda_api_s
	[ "$output" = "osrt_sum,cuda_api_sum" ]
	# --report=NAME: bash splits the word at '='
	run -0 complete_words gpuspy report --report = python_
	[ "$output" = "python_stacks" ]
}

@test "completion: option values, each accepted by gpuspy" {
	run -0 complete_words gpuspy export --format ""
	[[ $'\n'"$output"$'\n' == *$'\n'chrome$'\n'* ]]
	values() { # CMD OPTION: the values completed, each checked by CMD's parser (then --help)
		local v
		run -0 complete_words gpuspy "$1" "$2" ""
		[ -n "$output" ]
		for v in $output; do
			run -0 "$GPUSPY" "$1" "$2" "$v" --help
		done
	}
	values export --format
	values report --format
	values report --group-by
	values top --format
	values top --sort
	values top --group-by
}

@test "completion: pids, trace files and -o" {
	run -0 complete_words gpuspy record -p "$$"
	[[ $'\n'"$output"$'\n' == *$'\n'$$$'\n'* ]]
	run -0 complete_words gpuspy top --pid "1,$$"
	[[ $'\n'"$output"$'\n' == *$'\n'1,$$$'\n'* ]]
	mkdir "$WORK/dir"
	touch "$WORK/run.gpuspy" "$WORK/run.json"
	# report and export take a trace file: *.gpuspy, and directories to walk into
	run -0 complete_words gpuspy report "$WORK/"
	[ "$(echo "$output" | sort | tr '\n' ' ')" = "$WORK/dir $WORK/run.gpuspy " ]
	run -0 complete_words gpuspy export "$WORK/r"
	[ "$output" = "$WORK/run.gpuspy" ]
	# -o: any file
	run -0 complete_words gpuspy export run.gpuspy -o "$WORK/run."
	[ "$(echo "$output" | sort | tr '\n' ' ')" = "$WORK/run.gpuspy $WORK/run.json " ]
	run -0 complete_words gpuspy record --output "$WORK/d"
	[ "$output" = "$WORK/dir" ]
	# values with nothing to offer get nothing
	run -0 complete_words gpuspy record -d ""
	[ -z "$output" ]
}
