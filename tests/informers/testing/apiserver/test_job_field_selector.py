"""The Job field selector ``status.successful`` reads ``status.succeeded``
(the real server's field label and source)."""

from __future__ import annotations

from kubernetes import client

from informers.testing import ApiServer


def test_status_successful_selects_on_status_succeeded(
    server: ApiServer, api: client.ApiClient, ns: str
) -> None:
    batch = client.BatchV1Api(api)
    template = {
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}],
        }
    }
    for name in ("done", "running"):
        batch.create_namespaced_job(
            ns, {"metadata": {"name": name}, "spec": {"template": template}}
        )
    batch.patch_namespaced_job_status("done", ns, {"status": {"succeeded": 1}})
    done = batch.list_namespaced_job(ns, field_selector="status.successful=1")
    assert [j.metadata.name for j in done.items] == ["done"]
    pending = batch.list_namespaced_job(ns, field_selector="status.successful=0")
    assert [j.metadata.name for j in pending.items] == ["running"]
