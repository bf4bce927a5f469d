#!/usr/bin/env bash
# Builds a pinned CLI from the Go module proxy into bin/<cli>-<version>,
# once: the acceptance suite runs under OpenTofu and under the oldest
# Terraform it is tested on, as well as under the Terraform on PATH.
# Nothing but Go modules is downloaded.
#
#   bash scripts/cli.sh tofu 1.12.6        # prints the binary's path
#   bash scripts/cli.sh terraform 1.5.7
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:?usage: cli.sh tofu|terraform VERSION}
version=${2:?usage: cli.sh tofu|terraform VERSION}
case "$cli" in
  # As a release build: without the flag OpenTofu calls itself v$version-dev.
  tofu) module=github.com/opentofu/opentofu pkg=./cmd/tofu flags="-X github.com/opentofu/opentofu/version.dev=no" ;;
  # Terraform releases up to 1.5 are whole modules on the proxy; later
  # ones leave out the state backends they replace with directories.
  terraform) module=github.com/hashicorp/terraform pkg=. flags="" ;;
  *) echo "cli.sh: no recipe for $cli" >&2; exit 2 ;;
esac
bin="$root/bin/$cli-$version"
if [ ! -x "$bin" ]; then
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  echo "building $cli v$version from the Go module proxy (a few minutes, once)" >&2
  dir=$(cd "$work" && go mod download -json "$module@v$version" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "go mod download of $module v$version failed" >&2; exit 1; }
  # The module cache is read-only: build from a writable copy.
  cp -r "$dir" "$work/src"
  chmod -R u+w "$work/src"
  mkdir -p "$root/bin"
  (cd "$work/src" && go build -ldflags "$flags" -o "$bin.tmp" "$pkg")
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
