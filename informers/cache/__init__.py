"""Cache layer of kube-informers (see docs/concepts/architecture)."""
