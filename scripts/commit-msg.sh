#!/usr/bin/env bash
# The project's rule for commit messages, as a git commit-msg hook and as a
# check of the history (make lint):
#
#   bash scripts/commit-msg.sh FILE        check one message (the hook; install
#                                          it with `make hooks`)
#   bash scripts/commit-msg.sh --history   check every commit after the rule
#                                          was adopted
#
# A subject of at most 72 characters, in the imperative ("Add", not "Added"
# or "Adding"), without a closing full stop; the why goes in the body, after a
# blank line. `git log --oneline` then reads as a list of what each change
# does.
set -euo pipefail

# The last commit before the rule: earlier subjects are left as they are.
adopted_after=6115567

problems() { # $1: the message; prints one line per problem
  local subject second first
  subject=$(printf '%s\n' "$1" | sed -n 1p)
  second=$(printf '%s\n' "$1" | sed -n 2p)
  first=${subject%% *}
  [ -n "$subject" ] || { echo "the subject is empty"; return; }
  [ "${#subject}" -le 72 ] || echo "the subject has ${#subject} characters; at most 72 (put the why in the body)"
  [[ "$subject" != *. ]] || echo "the subject ends with a full stop"
  [ -z "$second" ] || echo "the second line is not blank: a blank line separates the subject from the body"
  case "$first" in
    Embed | Feed | Seed | Speed | Need | Shed | Bring | String) ;; # imperatives that look otherwise
    *ed | *ing) echo "the subject starts with \"$first\": write it in the imperative (\"Add\", not \"Added\" or \"Adding\")" ;;
  esac
}

if [ "${1:-}" = --history ]; then
  if ! git cat-file -e "$adopted_after^{commit}" 2>/dev/null; then
    echo "commit-msg: $adopted_after is not in this clone's history (a shallow clone?); nothing to check"
    exit 0
  fi
  failed=0
  while read -r commit; do
    found=$(problems "$(git log -1 --format=%B "$commit")")
    if [ -n "$found" ]; then
      printf '%s %s\n%s\n' "$(git log -1 --format=%h "$commit")" "$(git log -1 --format=%s "$commit")" "$(sed 's/^/  /' <<<"$found")"
      failed=1
    fi
  done < <(git rev-list --no-merges "$adopted_after..HEAD")
  exit "$failed"
fi

[ $# -eq 1 ] || { echo "usage: $0 FILE | --history" >&2; exit 2; }
message=$(grep -v '^#' "$1")
found=$(problems "$message")
[ -z "$found" ] || { printf 'commit message:\n%s\n' "$(sed 's/^/  /' <<<"$found")" >&2; exit 1; }
