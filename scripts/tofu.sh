#!/usr/bin/env bash
# Builds the pinned OpenTofu CLI from the Go module proxy into
# bin/tofu-$TOFU_VERSION, once: the acceptance suite runs under it as well
# as under Terraform. Nothing but Go modules is downloaded.
#
#   TOFU_VERSION=1.12.6 bash scripts/tofu.sh   # prints the binary's path
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${TOFU_VERSION:-1.12.6}
bin="$root/bin/tofu-$version"
if [ ! -x "$bin" ]; then
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  echo "building OpenTofu v$version from the Go module proxy (a few minutes, once)" >&2
  dir=$(cd "$work" && go mod download -json "github.com/opentofu/opentofu@v$version" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "go mod download of opentofu v$version failed" >&2; exit 1; }
  # The module cache is read-only: build from a writable copy.
  cp -r "$dir" "$work/src"
  chmod -R u+w "$work/src"
  mkdir -p "$root/bin"
  # As a release build: without this the binary calls itself v$version-dev.
  (cd "$work/src" && go build -ldflags "-X github.com/opentofu/opentofu/version.dev=no" -o "$bin.tmp" ./cmd/tofu)
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
