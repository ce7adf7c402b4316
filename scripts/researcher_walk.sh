#!/usr/bin/env bash
# The researcher walk of docs/researchers.md, runnable: from the first admin to a report of one's own metric and a Parquet
# export, with curl against a running FactLab and its Celery workers (tests/celery/test_researcher_walk.py runs it).
#
# Before: the first admin, e.g.  DJANGO_SUPERUSER_PASSWORD=... manage.py createsuperuser --noinput --username admin --email a@example.org
# Usage:  API=http://127.0.0.1:8000/api ADMIN_USER=admin ADMIN_PASSWORD=... scripts/researcher_walk.sh docs.jsonl
# docs.jsonl: FactLab's JSON lines (docs/import-jsonl.md), summaries with a human "Factuality" score.
set -euo pipefail
DOCS=${1:?usage: researcher_walk.sh DOCS.jsonl}
: "${API:?set API, e.g. http://127.0.0.1:8000/api}" "${ADMIN_USER:?}" "${ADMIN_PASSWORD:?}"
SLUG=${SLUG:-ada-study}
WORK=$(mktemp -d)
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# Poll a URL until it stops answering 202 (a report being computed) or its job leaves pending/running.
wait_job() {
  local url=$1 status
  for _ in $(seq 1 120); do
    status=$(curl -sf "$url" -H "$AUTH" | json 'd["status"]')
    case $status in pending|running) sleep 1 ;; succeeded) return 0 ;; *) echo "job $url: $status" >&2; curl -s "$url" -H "$AUTH" >&2; return 1 ;; esac
  done
  echo "job $url still $status after 120 s" >&2; return 1
}

echo "# 1. the admin's API token"
ADMIN=$(curl -sf -X POST "$API/auth/token/" -H "Content-Type: application/json" \
  -d "{\"username\": \"$ADMIN_USER\", \"password\": \"$ADMIN_PASSWORD\"}" | json 'd["token"]')

echo "# 2. the admin invites ada (or: manage.py create_researcher ada)"
curl -sf -X POST "$API/researchers/" -H "Authorization: Token $ADMIN" -H "Content-Type: application/json" \
  -d '{"username": "ada", "email": "ada@example.org"}' > "$WORK/invite.json"
UID_=$(json 'd["invitation"]["uid"]' < "$WORK/invite.json")
TOKEN=$(json 'd["invitation"]["token"]' < "$WORK/invite.json")

echo "# 3. ada sets her password and gets an API token"
ADA=$(curl -sf -X POST "$API/auth/invitation/" -H "Content-Type: application/json" \
  -d "{\"uid\": \"$UID_\", \"token\": \"$TOKEN\", \"password\": \"walk-$RANDOM-$RANDOM-pw\"}" | json 'd["token"]')
AUTH="Authorization: Token $ADA"

echo "# 4. ada uploads her documents: 202, then the import job is polled until it succeeded"
JOB=$(curl -sf -X POST "$API/imports/" -H "$AUTH" -F "file=@$DOCS" -F format=jsonl -F campaign="$SLUG" | json 'd["id"]')
wait_job "$API/imports/$JOB/"
curl -sf "$API/imports/$JOB/" -H "$AUTH" | json 'd["report"]["created"]'

echo "# 5. her metric (here: summary length in words) for every summary, uploaded as scores"
curl -sf "$API/campaigns/$SLUG/summaries/?page_size=500" -H "$AUTH" | python3 -c '
import json, sys
print("summary_id,metric,value")
for row in json.load(sys.stdin)["results"]:
    print(row["id"], "my_metric", len(row["text"].split()), sep=",")' > "$WORK/my_metric.csv"
JOB=$(curl -sf -X POST "$API/imports/" -H "$AUTH" -F "file=@$WORK/my_metric.csv" -F format=csv -F kind=scores -F campaign="$SLUG" | json 'd["id"]')
wait_job "$API/imports/$JOB/"

echo "# 6. the report: 202 while a worker computes it, then 200"
for _ in $(seq 1 120); do
  code=$(curl -s -o "$WORK/report.json" -w "%{http_code}" "$API/campaigns/$SLUG/report/?partial=false" -H "$AUTH")
  [ "$code" = 200 ] && break
  [ "$code" = 202 ] || { echo "report: HTTP $code" >&2; cat "$WORK/report.json" >&2; exit 1; }
  sleep 1
done
[ "$code" = 200 ] || { echo "report still 202 after 120 s" >&2; exit 1; }
json '"my_metric pearson:", d["correlations"]["my_metric"]["pearson"]' < "$WORK/report.json"

echo "# 7. the Parquet export"
curl -sf "$API/campaigns/$SLUG/export/?format=parquet&license=cc-by-4.0" -H "$AUTH" -o "$WORK/export.zip"
python3 -c "import sys, zipfile; print('\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))" "$WORK/export.zip"
rm -rf "$WORK"
echo "walk done"
