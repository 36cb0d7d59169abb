#!/usr/bin/env bash
# deploy/local/oversize.sh — oversize-input trials (issue 24), outside the test command.
#
# Generates, in a temporary folder: a 50 MB Markdown document, a document that is one 9.5 MB
# line, a Slack export whose one day file holds a 100,000-message thread, and a calendar whose
# one event recurs every minute with no end (about a million occurrences in the default window
# of a year either side). Each is ingested under GNU time; then `epigraph run --until-idle`
# (static vectors) builds the graph of everything published. Prints, per step, what happened
# (published / dead-lettered, with the reasons from `epigraph dlq list`), the seconds and the
# peak RSS. Needs the services up (deploy/local/services.sh up) and a built binary; uses its own
# topic prefix, state and LanceDB folders, so it leaves the demo and the tests alone.
#
#   bash deploy/local/oversize.sh            # all four
#   OVERSIZE_SKIP_RUN=1 bash deploy/local/oversize.sh   # ingest only
#
# Figures: docs/reliability.md, "Oversize input".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source deploy/local/setup.sh
bin="${EPIGRAPH_BIN:-$CARGO_TARGET_DIR/debug/epigraph}"
[ -x "$bin" ] || { echo "no binary at $bin: cargo build --workspace first" >&2; exit 1; }
work="$(mktemp -d /tmp/epigraph-oversize.XXXXXX)"
trap 'rm -rf "$work"' EXIT
run_id="oversize-$(date +%s)"
export EPIGRAPH_KAFKA__TOPIC_PREFIX="$run_id" EPIGRAPH_KAFKA__GROUP_ID="$run_id-run"
export EPIGRAPH_STATE_DIR="$work/state" EPIGRAPH_LANCEDB__DIR="$work/lancedb"
export EPIGRAPH_MODEL__KIND=static EPIGRAPH_RUN__METRICS_LISTEN=127.0.0.1:0 RUST_LOG=warn
tenant=oversize

python3 - "$work" <<'PY'
import json, os, random, sys
work = sys.argv[1]
rng = random.Random(24)
words = ("the team decided to move the launch after the review because the vendor could not "
         "deliver the parts on time and the budget was cut by the board in march").split()
os.makedirs(f"{work}/big", exist_ok=True)
with open(f"{work}/big/fifty.md", "w") as f:
    f.write("# Fifty megabytes\n\n")
    while f.tell() < 50 * 1024 * 1024:
        f.write(" ".join(rng.choice(words) for _ in range(60)) + ".\n\n")
os.makedirs(f"{work}/line", exist_ok=True)
with open(f"{work}/line/line.md", "w") as f:
    f.write("# One line\n\n")
    while f.tell() < 9_500_000:
        f.write(" ".join(rng.choice(words) for _ in range(200)) + " ")
    f.write("\n")
slack = f"{work}/slack"
os.makedirs(f"{slack}/general", exist_ok=True)
json.dump([{"id": "U1", "name": "ada", "real_name": "Ada Lovelace", "profile": {"email": "ada@example.com"}},
           {"id": "U2", "name": "bob", "real_name": "Bob Stone", "profile": {"email": "bob@example.com"}}],
          open(f"{slack}/users.json", "w"))
json.dump([{"id": "C1", "name": "general", "created": "1700000000", "members": ["U1", "U2"]}],
          open(f"{slack}/channels.json", "w"))
root = "1700000000.000000"
messages = [{"type": "message", "user": "U1", "text": "Thread for the launch review.", "ts": root,
             "thread_ts": root, "reply_count": 100000}]
for i in range(1, 100001):
    messages.append({"type": "message", "user": "U2" if i % 2 else "U1",
                     "text": " ".join(rng.choice(words) for _ in range(12)) + f" ({i})",
                     "ts": f"1700000000.{i:06d}", "thread_ts": root, "parent_user_id": "U1"})
json.dump(messages, open(f"{slack}/general/2023-11-14.json", "w"))
now = __import__("datetime").datetime.utcnow().strftime("%Y%m%dT000000Z")
with open(f"{work}/minutely.ics", "w") as f:
    f.write("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//epigraph//oversize//EN\r\n"
            "BEGIN:VEVENT\r\nUID:every-minute@example.com\r\n"
            f"DTSTAMP:{now}\r\nDTSTART:{now}\r\nDURATION:PT1M\r\n"
            "RRULE:FREQ=MINUTELY\r\nSUMMARY:Heartbeat review\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
PY

printf '%-34s %10s %-44s %8s %12s\n' step input outcome seconds "peak RSS"
measure() {  # measure <step> <input path> <epigraph args…>
  local step="$1" input="$2"; shift 2
  local size; size=$(du -sh "$input" | cut -f1)
  local start end out rss
  start=$(date +%s.%N)
  out=$(/usr/bin/time -f 'RSS %M' "$bin" "$@" 2> "$work/time.err") || { tail -5 "$work/time.err"; }
  end=$(date +%s.%N)
  rss=$(awk '/^RSS/ {printf "%.0f MiB", $2/1024}' "$work/time.err")
  local outcome
  outcome=$(tail -n 1 <<<"$out" | python3 -c 'import json,sys
try:
    d = json.loads(sys.stdin.read())
except Exception:
    print("see stderr"); sys.exit()
keys = ["published", "dead_lettered", "live_sources", "memories", "events"]
print(", ".join(f"{k} {d[k]}" for k in keys if k in d))')
  printf '%-34s %10s %-44s %8.1f %12s\n' "$step" "$size" "$outcome" "$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')" "$rss"
}
measure "50 MB document" "$work/big" ingest docs "$work/big" --tenant "$tenant"
measure "one 9.5 MB line" "$work/line" ingest docs "$work/line" --tenant "$tenant"
measure "100,000-message thread" "$work/slack" ingest slack "$work/slack" --tenant "$tenant"
measure "event every minute, no end" "$work/minutely.ics" ingest ics "$work/minutely.ics" --tenant "$tenant"
if [ -z "${OVERSIZE_SKIP_RUN:-}" ]; then
  measure "run --until-idle (all of it)" "$work" run --until-idle
fi
echo
echo "dead letters:"
"$bin" dlq list
