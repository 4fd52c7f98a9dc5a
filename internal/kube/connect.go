package kube

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

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
	cs, err := newClient(cfg)
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
