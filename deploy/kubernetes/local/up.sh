#!/usr/bin/env bash
# up.sh: a real single-node Kubernetes (v1.34.4, built from source) on one Debian 12 machine with no
# container registry: etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kubelet,
# containerd (Debian) + runc + CNI bridge, images built locally (pause, busybox, hail) and imported.
# No kube-proxy, no CoreDNS (hail's Jobs need neither).
#
#   bash deploy/kubernetes/local/up.sh     # everything, from scratch (builds skipped when binaries exist)
#   export KUBECONFIG=/tmp/k8s-local/state/pki/admin.kubeconfig; kubectl get nodes
#   bash deploy/kubernetes/local/down.sh   # stop every daemon, unmount, remove state
#
# Needs: root, cgroup v1 or v2, Debian apt repos, the Go module proxy, Go >= 1.24 at /usr/local/go.
# hail's image is built from HAIL_SRC (default: the project this script is in) when W/hail is missing:
# delete /tmp/k8s-local/hail (or build a new one there) and run up.sh again to replace the image.
set -euo pipefail
W=${W:-/tmp/k8s-local}          # work dir: sources, binaries, images
S=$W/state                    # everything the running cluster writes (down.sh removes it)
B=$W/bin
K8S=v1.34.4; STAGING=v0.34.4; ETCD=v3.6.4
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HAIL_SRC=${HAIL_SRC:-$(cd "$HERE/../../.." && pwd)}   # the project this script belongs to
NODE=node1
NODE_IP=10.99.0.1             # added to lo (kubelet refuses a 127.x node IP; this kernel has no dummy driver)
POD_CIDR=10.88.0.0/16         # CNI bridge cni0, gateway 10.88.0.1
export PATH=$B:/usr/local/go/bin:$PATH GOWORK=off GOFLAGS=-mod=mod
mkdir -p "$W" "$B" "$S"/{log,pid}
log() { echo "[$(date +%T)] $*"; }

# ---------------------------------------------------------------- 0. packages
if ! command -v containerd >/dev/null || ! [ -x /usr/lib/cni/bridge ] || ! [ -x /bin/busybox ]; then
	log "apt: containerd runc CNI plugins busybox-static"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q containerd runc containernetworking-plugins \
		busybox-static openssl iptables conntrack socat iproute2 git >/dev/null
fi

# ---------------------------------------------------------------- 1. binaries from the Go module proxy
if ! [ -x $B/kubelet ] || ! [ -x $B/kubectl ]; then
	log "build kubernetes $K8S (staging replaces -> published k8s.io/* $STAGING)"
	dir=$(go mod download -json k8s.io/kubernetes@$K8S | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	rm -rf $W/k8s && cp -r "$dir" $W/k8s && chmod -R u+w $W/k8s && rm -f $W/k8s/go.work $W/k8s/go.work.sum
	sed -i -E "s#^(\t(k8s.io/[a-z0-9-]+)) => \./staging/src/k8s.io/[a-z0-9-]+\$#\1 => \2 $STAGING#" $W/k8s/go.mod
	V="-X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1"
	V="$V -X k8s.io/component-base/version.gitMinor=$(echo $K8S | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean"
	V="$V -X k8s.io/client-go/pkg/version.gitVersion=$K8S -X k8s.io/client-go/pkg/version.gitMajor=1"
	V="$V -X k8s.io/client-go/pkg/version.gitMinor=$(echo $K8S | cut -d. -f2)"
	(cd $W/k8s && go mod download && time nice -n 19 go build -trimpath -ldflags="-s -w $V" -o ${KBIN:-$B}/ \
		./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/kubelet ./cmd/kubectl)
fi
if ! [ -x $B/etcd ]; then
	log "build etcd $ETCD (module replaces dropped)"
	dir=$(go mod download -json go.etcd.io/etcd/server/v3@$ETCD | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	rm -rf $W/etcd-src && cp -r "$dir" $W/etcd-src && chmod -R u+w $W/etcd-src
	sed -i -e '/^replace (/,/^)/d' -e '/FORBIDDEN_DEPENDENCY/d' $W/etcd-src/go.mod
	(cd $W/etcd-src && time nice -n 19 go build -trimpath -ldflags='-s -w' -o $B/etcd .)
fi

# ---------------------------------------------------------------- 2. images, built without a registry
if ! [ -x $B/mkimg ]; then
	log "build mkimg (go-containerregistry: layers -> docker-archive tarball)"
	rm -rf $W/mkimg && cp -r "$HERE/mkimg" $W/mkimg
	(cd $W/mkimg && nice -n 19 go build -o $B/mkimg .)
fi
if ! [ -x $B/pause ]; then
	mkdir -p $W/pause && cd $W/pause
	[ -f go.mod ] || printf 'module pause\n\ngo 1.22\n' > go.mod
	[ -f main.go ] || cat > main.go <<'EOF'
// pause: the sandbox process for every pod; sleeps until SIGTERM/SIGINT.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
EOF
	CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags='-s -w' -o $B/pause .
fi
if ! [ -x $W/hail ]; then
	log "build hail from $HAIL_SRC (static, as deploy/Dockerfile does)"
	(cd "$HAIL_SRC" && CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags=-s -o $W/hail ./cmd/hail)
fi
I=$W/images
if ! [ -f $I/hail.tar ] || [ $W/hail -nt $I/hail.tar ]; then
	log "images: hail:local (distroless-static:nonroot lookalike), busybox:1.36, localhost/pause:local"
	mkdir -p $I && cd $I && rm -rf hailroot bbroot pauseroot
	# hail: what gcr.io/distroless/static-debian12:nonroot + deploy/Dockerfile give: uid 65532, /tmp, CA certs
	mkdir -p hailroot/usr/local/bin hailroot/etc/ssl/certs hailroot/home/nonroot hailroot/tmp
	cp $W/hail hailroot/usr/local/bin/hail
	cp /etc/ssl/certs/ca-certificates.crt hailroot/etc/ssl/certs/ 2>/dev/null || true
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > hailroot/etc/passwd
	printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > hailroot/etc/group
	chown 65532:65532 hailroot/home/nonroot && chmod 700 hailroot/home/nonroot && chmod 1777 hailroot/tmp
	tar --numeric-owner -C hailroot -cf hail-layer.tar .
	# busybox: Debian's static busybox with every applet linked into /bin
	mkdir -p bbroot/bin bbroot/etc bbroot/tmp && cp /bin/busybox bbroot/bin/busybox && chmod 1777 bbroot/tmp
	for a in $(bbroot/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox bbroot/bin/$a; done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' > bbroot/etc/passwd
	printf 'root:x:0:\nnobody:x:65534:\n' > bbroot/etc/group
	tar --numeric-owner -C bbroot -cf busybox-layer.tar .
	mkdir -p pauseroot && cp $B/pause pauseroot/pause && tar --numeric-owner -C pauseroot -cf pause-layer.tar .
	P=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	mkimg -tag hail:local -o hail.tar -entrypoint /usr/local/bin/hail -user 65532 -workdir /home/nonroot \
		-env $P -env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt hail-layer.tar
	mkimg -tag busybox:1.36 -o busybox.tar -cmd sh -env $P busybox-layer.tar
	mkimg -tag localhost/pause:local -o pause.tar -entrypoint /pause pause-layer.tar
fi

# ---------------------------------------------------------------- 3. host network: node IP, forwarding
ip -4 addr show dev lo | grep -q " $NODE_IP/" || ip addr add $NODE_IP/32 dev lo
[ -f $S/sysctl.orig ] || sysctl -e net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables 2>/dev/null > $S/sysctl.orig
sysctl -qw net.ipv4.ip_forward=1
[ -d /proc/sys/net/bridge ] && sysctl -qw net.bridge.bridge-nf-call-iptables=1 || true

# ---------------------------------------------------------------- 4. PKI (openssl) and kubeconfig
K=$S/pki
if ! [ -f $K/admin.kubeconfig ]; then
	log "pki"
	mkdir -p $K && cd $K
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj /CN=k8s-local-ca 2>/dev/null
	sign() { # name subject extensions
		openssl req -newkey rsa:2048 -nodes -keyout $1.key -out $1.csr -subj "$2" 2>/dev/null
		openssl x509 -req -in $1.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $1.crt -days 30 -extfile <(printf "$3") 2>/dev/null
	}
	sign apiserver /CN=kube-apiserver "subjectAltName=IP:127.0.0.1,IP:$NODE_IP,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment"
	sign admin "/O=system:masters/CN=admin" "extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment"
	openssl genrsa -out sa.key 2048 2>/dev/null && openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	cat > admin.kubeconfig <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://$NODE_IP:6443", certificate-authority: "$K/ca.crt"}
users:
- name: admin
  user: {client-certificate: "$K/admin.crt", client-key: "$K/admin.key"}
contexts:
- name: local
  context: {cluster: local, user: admin, namespace: default}
current-context: local
EOF
fi
export KUBECONFIG=$K/admin.kubeconfig

start() { # name command...: start a daemon in the background, log to $S/log/name.log
	local n=$1; shift
	if [ -f $S/pid/$n.pid ] && kill -0 "$(cat $S/pid/$n.pid)" 2>/dev/null; then log "$n already running"; return; fi
	log "start $n"
	# The daemon keeps no descriptor it inherited beyond stdio: a lock the caller holds (flock's) must
	# not outlive up.sh in etcd or the kubelet.
	( for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec "$@" ) >$S/log/$n.log 2>&1 &
	echo $! > $S/pid/$n.pid
}
waitfor() { # what seconds command...
	local what=$1 t=$2; shift 2
	for _ in $(seq "$t"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
	echo "timed out waiting for $what" >&2; return 1
}

# ---------------------------------------------------------------- 5. containerd + CNI
C=$S/containerd
mkdir -p $C $S/cni/net.d $S/cni/ipam
cat > $S/cni/net.d/10-bridge.conflist <<EOF
{
  "cniVersion": "0.4.0",
  "name": "k8s-local",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$S/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
cat > $C/config.toml <<EOF
version = 2
root = "$C/root"
state = "$C/state"
[grpc]
  address = "$C/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:local"
  stream_server_address = "127.0.0.1"
  # runc sets oom_score_adj -998 for sandboxes; without CAP_SYS_RESOURCE (this VM) that fails with
  # "nsexec: failed to update /proc/self/oom_score_adj: Permission denied". Clamp to containerd's own.
  restrict_oom_score_adj = $( (echo -1 > /proc/self/oom_score_adj) 2>/dev/null && echo false || echo true)
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$S/cni/net.d"
EOF
start containerd containerd --config $C/config.toml
waitfor containerd 30 ctr -a $C/containerd.sock version
for img in pause busybox hail; do ctr -a $C/containerd.sock -n k8s.io images import $I/$img.tar >/dev/null; done
ctr -a $C/containerd.sock -n k8s.io images ls -q | grep -v '^sha256:'

# ---------------------------------------------------------------- 6. control plane
start etcd etcd --name local --data-dir $S/etcd --listen-client-urls http://127.0.0.1:2379 \
	--advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
	--initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster local=http://127.0.0.1:2380 \
	--listen-metrics-urls http://127.0.0.1:2381
waitfor etcd 30 curl -sf http://127.0.0.1:2379/health
start kube-apiserver kube-apiserver --etcd-servers=http://127.0.0.1:2379 \
	--bind-address=$NODE_IP --advertise-address=$NODE_IP --secure-port=6443 \
	--tls-cert-file=$K/apiserver.crt --tls-private-key-file=$K/apiserver.key --client-ca-file=$K/ca.crt \
	--service-account-issuer=https://kubernetes.default.svc.cluster.local \
	--service-account-key-file=$K/sa.pub --service-account-signing-key-file=$K/sa.key \
	--service-cluster-ip-range=10.0.0.0/24 --authorization-mode=Node,RBAC --allow-privileged=true \
	--kubelet-client-certificate=$K/admin.crt --kubelet-client-key=$K/admin.key \
	--kubelet-preferred-address-types=InternalIP
waitfor kube-apiserver 90 kubectl get --raw /readyz
start kube-controller-manager kube-controller-manager --kubeconfig=$KUBECONFIG \
	--authentication-kubeconfig=$KUBECONFIG --authorization-kubeconfig=$KUBECONFIG \
	--service-account-private-key-file=$K/sa.key --root-ca-file=$K/ca.crt \
	--cluster-signing-cert-file=$K/ca.crt --cluster-signing-key-file=$K/ca.key \
	--use-service-account-credentials=true --leader-elect=false --bind-address=127.0.0.1
start kube-scheduler kube-scheduler --kubeconfig=$KUBECONFIG \
	--authentication-kubeconfig=$KUBECONFIG --authorization-kubeconfig=$KUBECONFIG \
	--leader-elect=false --bind-address=127.0.0.1

# ---------------------------------------------------------------- 7. kubelet
KL=$S/kubelet
mkdir -p $KL/root $S/pod-logs
CGV1=false; [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || CGV1=true
cat > $KL/config.yaml <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$C/containerd.sock
failSwapOn: false
failCgroupV1: false          # this host is cgroup v1 ($CGV1); kubelet 1.34 still runs on it when told
address: $NODE_IP
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $K/ca.crt}
authorization: {mode: AlwaysAllow}
podLogsDirectory: $S/pod-logs
evictionHard: {memory.available: 100Mi, nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
resolvConf: /etc/resolv.conf
EOF
start kubelet kubelet --config=$KL/config.yaml --kubeconfig=$KUBECONFIG --root-dir=$KL/root \
	--hostname-override=$NODE --node-ip=$NODE_IP
waitfor "node $NODE Ready" 120 sh -c "kubectl get node $NODE -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"

# ---------------------------------------------------------------- 8. storage for hail-results: a hostPath PV
mkdir -p $S/pv/hail-results
chown 65532:65532 $S/pv/hail-results   # the pods run as uid 65532; hostPath does not apply fsGroup
kubectl apply -f - <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: hail-results-pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany, ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: $S/pv/hail-results, type: Directory}
EOF
waitfor "default service account" 60 kubectl get serviceaccount default
kubectl get nodes -o wide
log "cluster up: export KUBECONFIG=$KUBECONFIG PATH=$B:\$PATH"
