"""Wire data layer of kube-informers (see docs/concepts/architecture)."""
