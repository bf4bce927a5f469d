#!/usr/bin/env bash
# make demo: the provider end to end on the emulator, with nothing but Go and
# the Terraform CLI. Builds the provider and the emulator, starts the emulator
# on a free loopback port, points Terraform at the fresh build with a CLI
# configuration of its own (never the user's), applies examples/campaign,
# simulates clicks, re-targets one link in place, counts the clicks with
# data.shortlink_clicks, shows that the click history survived, destroys
# everything and stops the emulator.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
demo="$root/.demo"
rm -rf "$demo"
mkdir -p "$demo/bin" "$demo/work"

# Colour only on a terminal: a log file or a CI page gets plain text. A
# string rather than an array: the bash of macOS (3.2) takes an empty array
# for an unset variable under set -u, and would stop the demo on a terminal.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
  no_color=
else
  step() { printf '\n==> %s\n' "$*"; }
  no_color=-no-color
fi

step "Building the provider and the emulator (the first time, Go downloads and compiles the modules: a few minutes)"
(cd "$root" && go build -o "$demo/bin/terraform-provider-shortlink" . && go build -o "$demo/bin/shortlink-emulator" ./cmd/shortlink-emulator)

step "Starting the emulator on a free loopback port (fraud filter: 300ms per write)"
"$demo/bin/shortlink-emulator" -addr 127.0.0.1:0 -info-file "$demo/emulator.json" -filter-delay 300ms \
  >"$demo/emulator.out" 2>"$demo/emulator.log" &
emulator_pid=$!
# finish stops the emulator however the demo ends, and says so when it ends
# early: a Ctrl-C reaches the emulator too, and the step under way may then
# fail on a refused connection, which reads like a fault of the demo.
finish() {
  local status=$?
  kill "$emulator_pid" 2>/dev/null || true
  [ "$status" = 0 ] ||
    echo "make demo stopped before its end (exit $status): interrupted, or the step above failed (the emulator's log: .demo/emulator.log). Run it again to start afresh." >&2
}
trap finish EXIT
for _ in $(seq 1 100); do
  [ -s "$demo/emulator.json" ] && break
  kill -0 "$emulator_pid" 2>/dev/null || { cat "$demo/emulator.log"; echo "the emulator did not start" >&2; exit 1; }
  sleep 0.1
done
[ -s "$demo/emulator.json" ] || { echo "the emulator did not start in time" >&2; exit 1; }
field() { sed -n "s/.*\"$1\": \"\([^\"]*\)\".*/\1/p" "$demo/emulator.json"; }
export SHORTLINK_BASE_URL SHORTLINK_API_KEY TF_VAR_domain_id
SHORTLINK_BASE_URL=$(field baseUrl)
SHORTLINK_API_KEY=$(field apiKey)
TF_VAR_domain_id=$(field domainId)
echo "emulator at $SHORTLINK_BASE_URL, domain $TF_VAR_domain_id"

# Terraform uses the fresh build through dev_overrides, from a CLI
# configuration of the demo's own; nothing is downloaded.
cat >"$demo/terraformrc" <<RC
provider_installation {
  dev_overrides {
    "shortlink/shortlink" = "$demo/bin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$demo/terraformrc" TF_DATA_DIR="$demo/work/.terraform" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
cp "$root/examples/campaign/main.tf" "$demo/work/"
# TERRAFORM picks the CLI: terraform (default) or tofu (make demo TERRAFORM=tofu).
cli=${TERRAFORM:-terraform}
# `make tofu` builds OpenTofu into bin/ rather than on PATH: use that build
# when no tofu is on PATH.
if [ "$cli" = tofu ] && ! command -v tofu >/dev/null && [ -n "${TOFU:-}" ] && [ -x "$TOFU" ]; then
  cli=$TOFU
fi
command -v "$cli" >/dev/null || { echo "$cli is not on PATH${TOFU:+ (for OpenTofu, run make tofu first)}" >&2; exit 1; }
echo "CLI: $("$cli" version | head -n 1)"
# name is what the steps call the CLI: tofu for OpenTofu, whatever its path.
name=terraform
case "$("$cli" version | head -n 1)" in OpenTofu*) name=tofu ;; esac
# without_override_notice drops the CLI's notice that development overrides
# are in effect (the demo's own build is meant): in full on stderr, and as a
# line of the "Warnings:" summary that -compact-warnings prints on stdout,
# the summary too when that was its only warning.
without_override_notice() {
  awk '
    /^Warnings:$/ { held = $0 "\n"; items = 0; next }
    held != "" {
      if ($0 ~ /^- Provider development overrides are in effect/) next
      if ($0 ~ /^- /) items++
      held = held $0 "\n"
      if ($0 ~ /^To see the full warning notes/) { if (items) printf "%s", held; held = "" }
      fflush(); next
    }
    { print; fflush() }
    END { if (held != "" && items) printf "%s", held }'
}
tf() {
  local command=$1
  shift
  "$cli" -chdir="$demo/work" "$command" ${no_color:+"$no_color"} "$@" \
    2> >(grep -v -e 'Provider development overrides are in effect' >&2) | without_override_notice
}

step "$name apply: the spring campaign"
tf apply -auto-approve -input=false -compact-warnings
tf output short_urls

step "Visitors click the links"
visit() { "$demo/bin/shortlink-emulator" click -base "$SHORTLINK_BASE_URL" -url "$1" -n "$2" -referrer "$3"; }
sale_url=$(tf output -json short_urls | sed -n 's/.*"spring-sale":"\([^"]*\)".*/\1/p')
news_url=$(tf output -json short_urls | sed -n 's/.*"newsletter":"\([^"]*\)".*/\1/p')
visit "$sale_url" 3 "https://mail.example.net/inbox"
visit "$news_url" 1 "https://news.example.org/"

step "$name plan: re-target spring-sale in place (same short link, same QR code)"
new_pages='{"spring-sale":"https://shop.example.com/spring-extended","newsletter":"https://shop.example.com/newsletter","webinar":"https://events.example.com/spring-webinar"}'
link_id() { tf output -json link_ids | sed -n 's/.*"spring-sale":"\([^"]*\)".*/\1/p'; }
id_before=$(link_id)
tf plan -input=false -no-color -compact-warnings -var "landing_pages=$new_pages" -out="$demo/retarget.plan" >"$demo/retarget.txt"
grep -E '~ resource|~ destination|Plan:|must be replaced' "$demo/retarget.txt" || true
if grep -q 'must be replaced' "$demo/retarget.txt" || ! grep -q '~ destination' "$demo/retarget.txt"; then
  echo "the plan does not change spring-sale's destination in place:" >&2; cat "$demo/retarget.txt" >&2; exit 1
fi
tf apply -input=false -compact-warnings "$demo/retarget.plan"
id_after=$(link_id)
echo "spring-sale's link ID before the change: $id_before, after: $id_after"
[ "$id_before" = "$id_after" ] || { echo "the link was replaced, not changed in place" >&2; exit 1; }

step "Clicks per link, counted by data.shortlink_clicks during that plan"
tf output clicks
sale_clicks=$(tf output -json clicks | sed -n 's/.*"spring-sale":\([0-9]*\).*/\1/p')
[ "$sale_clicks" = 3 ] || { echo "data.shortlink_clicks counts $sale_clicks clicks of spring-sale, want 3" >&2; exit 1; }

step "More visitors, now sent to the new destination"
visit "$sale_url" 2 "https://social.example.com/post/1"

step "The click history of spring-sale survived the change (analytics export)"
sale_id=$(link_id)
"$demo/bin/shortlink-emulator" export -link-id "$sale_id" | tee "$demo/spring-sale.csv"
old=$(grep -c 'shop.example.com/spring?' "$demo/spring-sale.csv" || true)
new=$(grep -c 'shop.example.com/spring-extended' "$demo/spring-sale.csv" || true)
echo "clicks made before the change: $old (to the old destination), since: $new (to the new one); all on link ID $sale_id"
[ "$old" = 3 ] && [ "$new" = 2 ] || { echo "the export does not show the whole click history" >&2; exit 1; }

step "$name destroy"
tf destroy -auto-approve -input=false -compact-warnings
echo
echo "Demo finished: created 3 links, re-targeted one in place, kept its 5 clicks, destroyed everything."
echo "Next: run the provider by hand against the emulator (README.md, \"Developing and testing locally\")."
