#!/usr/bin/env bash
# deploy/kubernetes/run.sh: one distributed hail run on Kubernetes.
#
#   SHARDS=4 IMAGE=registry.example/hail:v1 bash deploy/kubernetes/run.sh
#
# 1. makes sure the shared results volume exists (results-pvc.yaml);
# 2. starts the Indexed Job of SHARDS shards, all due to start at START_AT (now + LEAD seconds,
#    long enough for every pod to be scheduled and pull the image);
# 3. waits for it, runs the merge Job, and copies total.json here (and renders report.html when a
#    local hail is on the PATH).
# Edit shards-job.yaml for the target URL and the load (-z, -q, -c are the whole run's).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

SHARDS=${SHARDS:-4}
LEAD=${LEAD:-90}
RUN=${RUN:-run-$(date +%Y%m%d-%H%M%S)}
IMAGE=${IMAGE:-hail:local}
START_AT=$(($(date +%s) + LEAD))
OUT=${OUT:-.}

render() {
	sed -e "s/__SHARDS__/$SHARDS/g" -e "s/__START_AT__/$START_AT/g" -e "s/__RUN__/$RUN/g" -e "s#image: hail:local#image: $IMAGE#" "$1"
}

kubectl get pvc hail-results >/dev/null 2>&1 || kubectl apply -f results-pvc.yaml
echo "run $RUN: $SHARDS shards starting at $(date -u -d "@$START_AT" +%FT%TZ)"
render shards-job.yaml | kubectl apply -f -
kubectl wait --for=condition=complete "job/hail-shards-$RUN" --timeout=2h
render merge-job.yaml | kubectl apply -f -
kubectl wait --for=condition=complete "job/hail-merge-$RUN" --timeout=10m
kubectl logs "job/hail-merge-$RUN" || true

# Copy the result out through a short-lived pod that mounts the volume.
kubectl run "hail-fetch-$RUN" --image=busybox:1.36 --restart=Never \
	--overrides='{"spec":{"containers":[{"name":"f","image":"busybox:1.36","command":["sleep","600"],"volumeMounts":[{"name":"r","mountPath":"/results"}]}],"volumes":[{"name":"r","persistentVolumeClaim":{"claimName":"hail-results"}}]}}'
kubectl wait --for=condition=Ready "pod/hail-fetch-$RUN" --timeout=5m
kubectl cp "hail-fetch-$RUN:/results/$RUN/total.json" "$OUT/$RUN-total.json"
kubectl delete pod "hail-fetch-$RUN" --wait=false
echo "merged result: $OUT/$RUN-total.json"
if command -v hail >/dev/null; then
	hail report "$OUT/$RUN-total.json" --output-format html -o "$OUT/$RUN-report.html"
	hail report "$OUT/$RUN-total.json"
fi
