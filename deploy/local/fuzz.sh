#!/usr/bin/env bash
# No-panic fuzzing at 1,000,000 cases per parser and decoder — a benchmark-style job outside the
# test command (deploy/local/test.sh runs the same tests at 100,000 cases). Prints each test's
# cases, result and duration; exit status non-zero if any fails. Figures: docs/reliability.md.
#
#   deploy/local/fuzz.sh                       # 1,000,000 cases each
#   EPIGRAPH_FUZZ_CASES=200000 deploy/local/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/epigraph/target}"
export EPIGRAPH_FUZZ_CASES="${EPIGRAPH_FUZZ_CASES:-1000000}"
cargo build --workspace --all-targets --locked

# The fuzz tests, by name (each runs once, alone).
tests=(
  "codec::tests::decoding_never_panics_on_100k_mutated_payloads"                     # Avro single-object and registry framing
  "serve::webhook::tests::parse_event_never_panics_on_100k_cases"                    # webhook JSON, ingest events
  "ics::tests::arbitrary_bytes_never_panic"                                         # iCalendar
  "mail::tests::parse_message_never_panics_on_100k_cases"                           # e-mail (eml)
  "mail::tests::an_mbox_of_100k_random_messages_is_read_without_loss"               # mbox splitting
  "html::tests::html_to_text_never_panics_on_100k_cases"                            # HTML / documents
  "beir::source::fuzz::every_line_of_a_random_corpus_is_an_event_or_a_dead_letter"  # BEIR corpus lines
  "slack::tests::random_day_files_never_panic_and_lose_nothing"                     # Slack export
  "formats::tests::read_text_never_panics_on_100k_cases"                            # PDF, DOCX, PPTX, XLSX
)
failed=0
printf '%-85s %10s %8s %s\n' test cases seconds result
for t in "${tests[@]}"; do
  start=$(date +%s.%N)
  if out=$(cargo test --workspace --locked --lib -q -- --exact "$t" --test-threads=1 2>&1); then
    result=ok
  else
    result=FAILED; failed=1
  fi
  passed=$(grep -o "[0-9]* passed" <<<"$out" | awk '{s+=$1} END {print s+0}')
  [ "$passed" -ge 1 ] || { result="NOT FOUND"; failed=1; }
  end=$(date +%s.%N)
  printf '%-85s %10s %8.1f %s\n' "$t" "$EPIGRAPH_FUZZ_CASES" "$(awk -v a="$start" -v b="$end" "BEGIN {print b - a}")" "$result"
  [ "$result" = ok ] || tail -20 <<<"$out"
done
exit $failed
