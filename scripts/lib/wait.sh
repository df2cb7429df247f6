# Sourced by scripts that wait for something to happen (a process up, a line written) rather than for a fixed time.
# wait_until DESCRIPTION COMMAND [ARGUMENT...]: runs COMMAND (quietly) every 0.1 s until it succeeds; after
# $WAIT_SECONDS (default 60: a deadline only a real failure reaches, even on a busy machine) says that DESCRIPTION
# did not happen and returns 1.
wait_until() {
  local what=$1
  shift
  local deadline=$(($(date +%s) + ${WAIT_SECONDS:-60}))
  until "$@" > /dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "${0##*/}: $what did not happen within ${WAIT_SECONDS:-60} s" >&2
      return 1
    fi
    sleep 0.1
  done
}

# has_line FILE PATTERN: whether FILE has a line matching the extended regular expression PATTERN.
has_line() { grep -Eq -- "$2" "$1" 2> /dev/null; }

# count_lines FILE PATTERN: how many lines of FILE match PATTERN (0 when there is no FILE).
count_lines() { grep -Ec -- "$2" "$1" 2> /dev/null || true; }

# has_lines FILE PATTERN COUNT: whether FILE has at least COUNT lines matching PATTERN.
has_lines() { [ "$(count_lines "$1" "$2")" -ge "$3" ]; }
