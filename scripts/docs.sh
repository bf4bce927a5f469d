#!/usr/bin/env bash
# make docs:       regenerate docs/ with tfplugindocs from templates/, examples/
#                  and the provider's schema.
# make docs-check: fail when docs/ is stale (generates into a temporary
#                  directory and compares), run `tfplugindocs validate`, and
#                  check that every example is formatted and valid.
#
# Offline: tfplugindocs builds the provider and runs `terraform init
# -plugin-dir` and `terraform providers schema -json` in a temporary
# directory. Without --tf-version it takes the first terraform on PATH and
# downloads one only when there is none, so this script refuses to run
# without one, puts it first on PATH and never passes --tf-version. The
# provider comes from the plugin directory, so nothing is downloaded.
#
# docs/ holds only what tfplugindocs generates; should a hand-written page
# ever be added there, note that tfplugindocs replaces
# only index.md and its own subdirectories (resources/, data-sources/, …);
# the script checks that everything else in docs/ is left as it was.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=${1:-generate}

tfplugindocs=${TFPLUGINDOCS:-$root/bin/tfplugindocs}
terraform=${TERRAFORM:-$(command -v terraform || true)}
case "$terraform" in
  /* | "") ;;
  */*) terraform="$OLDPWD/$terraform" ;; # relative to where make ran, before the cd above
  *) terraform=$(command -v "$terraform" || true) ;;
esac
[ -n "$terraform" ] && [ -x "$terraform" ] || {
  echo "terraform is not on PATH: tfplugindocs would download one. Install the Terraform CLI." >&2
  exit 1
}
[ -x "$tfplugindocs" ] || { echo "$tfplugindocs is missing: run make tools" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$work/terraformrc" # an empty CLI configuration, never the user's
# tfplugindocs and the checks below call the CLI by the name "terraform":
# give that name to the one asked for, whatever its file is called
# (bin/terraform-1.5.7, say).
mkdir "$work/cli"
ln -s "$terraform" "$work/cli/terraform"
PATH="$work/cli:$PATH"
export PATH TF_CLI_CONFIG_FILE="$work/terraformrc" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
echo "==> with $(terraform version | head -n 1)"

# What tfplugindocs owns in docs/; everything else there is hand-written.
managed=(index.md resources data-sources guides functions ephemeral-resources actions list-resources state-stores)

is_managed() {
  local m
  for m in "${managed[@]}"; do [ "$1" = "$m" ] && return 0; done
  return 1
}

# handwritten_sums prints a checksum of every hand-written file in docs/.
handwritten_sums() {
  local entry
  [ -d docs ] || return 0
  for entry in docs/* docs/.[!.]*; do
    [ -e "$entry" ] || continue
    is_managed "$(basename "$entry")" && continue
    find "$entry" -type f -exec cksum {} + | sort
  done
}

# generate renders the documentation into $1, relative to the repository
# (tfplugindocs joins --rendered-website-dir to --provider-dir).
generate() {
  "$tfplugindocs" generate \
    --provider-dir "$root" \
    --provider-name shortlink \
    --rendered-website-dir "$1" \
    --website-temp-dir "$work/tfws" \
    --examples-dir examples \
    --website-source-dir templates
}

# from_root prints the absolute path $1 as a path from the repository, which
# tfplugindocs joins to --provider-dir (and cleans): as many ".." as $root
# has names, then $1.
from_root() {
  local up="" dir=$root
  while [ "$dir" != / ]; do
    up="../$up"
    dir=$(dirname "$dir")
  done
  printf '%s%s\n' "$up" "${1#/}"
}

check_examples() {
  echo "==> terraform fmt -check -recursive examples"
  terraform fmt -check -recursive -diff examples

  echo "==> terraform validate of every example (dev_overrides to a fresh build, no init)"
  go build -o "$work/bin/terraform-provider-shortlink" .
  cat >"$work/terraformrc-examples" <<RC
provider_installation {
  dev_overrides {
    "registry.terraform.io/shortlink/shortlink" = "$work/bin"
    # Examples without a required_providers block name the provider by
    # its short name only.
    "registry.terraform.io/hashicorp/shortlink" = "$work/bin"
  }
  direct {}
}
RC
  local dir failed=0 out
  while IFS= read -r dir; do
    if out=$(TF_CLI_CONFIG_FILE="$work/terraformrc-examples" TF_DATA_DIR="$work/data/${dir//\//_}" \
      terraform -chdir="$dir" validate -no-color 2>&1); then
      echo "ok   $dir"
    else
      echo "FAIL $dir"
      printf '%s\n' "$out" | sed 's/^/     /'
      failed=1
    fi
  done < <(find examples -name '*.tf' | sed 's:/[^/]*$::' | sort -u)
  return "$failed"
}

# Terraform lists list resources from 1.14 on: an older CLI renders no
# docs/list-resources, whose page is then kept as the last 1.14+ run wrote
# it (TestSchemaParity_listResourcePage checks it against the schema).
list_pages=list-resources
list_pages_kept() {
  echo "docs/$list_pages kept as it is: $(terraform version | head -n 1) lists no list resources (Terraform 1.14 and later do)"
}

case "$mode" in
generate)
  before=$(handwritten_sums)
  [ ! -d "docs/$list_pages" ] || cp -R "docs/$list_pages" "$work/$list_pages"
  generate docs
  if [ ! -e "docs/$list_pages" ] && [ -d "$work/$list_pages" ]; then
    cp -R "$work/$list_pages" "docs/$list_pages"
    list_pages_kept
  fi
  if [ "$(handwritten_sums)" != "$before" ]; then
    echo "tfplugindocs changed hand-written files in docs/; restore them with git checkout docs/" >&2
    exit 1
  fi
  echo "docs/ regenerated"
  ;;
check)
  echo "==> tfplugindocs generate into a temporary directory"
  out="$work/rendered/docs"
  mkdir -p "$out"
  generate "$(from_root "$out")"
  stale=0
  for p in "${managed[@]}"; do
    if [ -e "docs/$p" ] && [ -e "$out/$p" ]; then
      diff -ru "docs/$p" "$out/$p" || stale=1
    elif [ "$p" = "$list_pages" ] && [ -e "docs/$p" ]; then
      list_pages_kept
    elif [ -e "docs/$p" ]; then
      echo "docs/$p is not generated any more" && stale=1
    elif [ -e "$out/$p" ]; then
      echo "docs/$p is missing" && stale=1
    fi
  done
  if [ "$stale" != 0 ]; then
    echo "docs/ is stale: run make docs and commit the result" >&2
    exit 1
  fi
  echo "docs/ is up to date"

  echo "==> tfplugindocs validate"
  "$tfplugindocs" validate --provider-dir "$root" --provider-name shortlink

  check_examples
  ;;
*)
  echo "usage: $0 generate|check" >&2
  exit 2
  ;;
esac
