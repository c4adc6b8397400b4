#!/usr/bin/env bats
# The suite's own guard (tests/check_bare_bang.py, run by tests/run.sh on every suite it runs):
# a bare `! cmd` before a test's last line never fails under bats.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_cmd python3
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

@test "bats passes a test whose bare '! true' is followed by another line, and the check flags it at file:line" {
	printf '%s\n' '@test "negated" {' '	! true' '	echo after' '}' > "$WORK/bare.bats"
	# what the check is for: bats itself lets it pass
	run bats "$WORK/bare.bats"
	[ "$status" -eq 0 ]
	run -1 python3 "$ROOT/tests/check_bare_bang.py" "$WORK/bare.bats"
	[ "$output" = "$WORK/bare.bats:2: a bare '!' before a test's last line never fails: use 'run !', '|| false' or '[ ... ]'" ]
}

@test "the check also flags '!' after ';', '&&' or '||', continued lines and helper functions" {
	# `%test`: bats would take a line starting with `@test` here for one of its own
	sed 's/^%test/@test/' > "$WORK/more.bats" <<-'EOF'
		helper() {
			! grep -q x /dev/null
			true
		}

		%test "lists" {
			true; ! true
			true && ! false
			! grep -q x \
				/dev/null
			echo last
		}
	EOF
	run -1 python3 "$ROOT/tests/check_bare_bang.py" "$WORK/more.bats"
	echo "$output"
	[ "$(echo "$output" | cut -d: -f2 | tr '\n' ' ')" = "2 7 8 9 " ]
}

@test "the check accepts run !, || false, [ ! ], if !, a last-line '!' and heredoc bodies" {
	sed 's/^%test/@test/' > "$WORK/good.bats" <<-'EOF'
		%test "fine" {
			run ! true
			! true || false
			! grep -q x /dev/null || false # the failing branch is what errexit sees
			[ ! -e /nonexistent ]
			[[ "a" != b ]]
			if ! true; then echo no; fi
			cat > /dev/null <<-'PY'
			! not shell
			PY
			! false
		}
	EOF
	run python3 "$ROOT/tests/check_bare_bang.py" "$WORK/good.bats"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
