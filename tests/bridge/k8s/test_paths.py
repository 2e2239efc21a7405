from bridge.k8s import paths


def test_core_and_group_paths() -> None:
    assert paths.resource("v1", "nodes") == "/api/v1/nodes"
    assert paths.resource("v1", "pods", namespace="ns", name="p", subresource="binding") == (
        "/api/v1/namespaces/ns/pods/p/binding"
    )
    assert paths.resource("scheduling.volcano.sh/v1beta1", "queues", name="default") == (
        "/apis/scheduling.volcano.sh/v1beta1/queues/default"
    )
