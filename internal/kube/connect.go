package kube

import (
	"fmt"

	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	storagev1client "k8s.io/client-go/kubernetes/typed/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is the part of the Kubernetes API hail kube uses: core (pods,
// logs, the pod proxy, ConfigMaps, events, claims), batch (Jobs) and
// storage (a claim's class). client-go's whole clientset (and its fake)
// has it; hail is built with these three clients only, not every API
// group's.
type Cluster interface {
	CoreV1() corev1client.CoreV1Interface
	BatchV1() batchv1client.BatchV1Interface
	StorageV1() storagev1client.StorageV1Interface
}

// clients is a Cluster of the three typed clients.
type clients struct {
	core    *corev1client.CoreV1Client
	batch   *batchv1client.BatchV1Client
	storage *storagev1client.StorageV1Client
}

func (c clients) CoreV1() corev1client.CoreV1Interface          { return c.core }
func (c clients) BatchV1() batchv1client.BatchV1Interface       { return c.batch }
func (c clients) StorageV1() storagev1client.StorageV1Interface { return c.storage }

func newClients(cfg *rest.Config) (Cluster, error) {
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	batch, err := batchv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	storage, err := storagev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return clients{core, batch, storage}, nil
}

// Connect opens the cluster a kubeconfig names, as kubectl does: the file
// given, else $KUBECONFIG, else ~/.kube/config; its current context or the
// one given. It returns the client and the namespace to use: the one
// given, else the context's, else "default".
func Connect(kubeconfig, context, namespace, userAgent string) (Cluster, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("no cluster to talk to: %v (give --kubeconfig, or set KUBECONFIG)", oneLine(err.Error()))
	}
	cfg.UserAgent = userAgent
	cfg.QPS, cfg.Burst = 50, 100 // the barrier and the progress ask every shard at once
	cs, err := newClients(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("the cluster: %v", err)
	}
	if namespace == "" {
		if namespace, _, err = cc.Namespace(); err != nil || namespace == "" {
			namespace = "default"
		}
	}
	return cs, namespace, nil
}
