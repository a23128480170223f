"""The types read from the client's models: Go names and widths as the
API server's decoder reports them, both spellings of the client's type
strings, and descriptions for ``kubectl explain``."""

from __future__ import annotations

import pytest

from informers.testing.apiserver._schema.kinds import EXTRA_RESOURCES, has_status, kind_type
from informers.testing.apiserver._schema.types import ANY, model_type, split_type

GO_TYPES = [
    ("V1DeploymentSpec", "replicas", "int32"),
    ("V1DeploymentSpec", "template", "v1.PodTemplateSpec"),
    ("V1PodSpec", "containers", "[]v1.Container"),
    ("V1PodSpec", "activeDeadlineSeconds", "int64"),
    ("V1PodSpec", "nodeSelector", "map[string]string"),
    ("V1PodSecurityContext", "supplementalGroups", "[]int64"),
    ("V1ObjectMeta", "generation", "int64"),
    ("V1ObjectMeta", "creationTimestamp", "v1.Time"),
    ("V1PriorityClass", "value", "int32"),
    ("V1CertificateSigningRequestSpec", "expirationSeconds", "int32"),
    ("V1ServiceAccountTokenProjection", "expirationSeconds", "int64"),
    ("V1ResourceRequirements", "limits", "map[string]resource.Quantity"),
    ("V1ServicePort", "targetPort", "intstr.IntOrString"),
    ("V1Secret", "data", "map[string][]uint8"),
    ("CoreV1EndpointPort", "port", "int32"),
]


@pytest.mark.parametrize(("model", "field", "go"), GO_TYPES)
def test_go_types(model: str, field: str, go: str) -> None:
    assert model_type(model).fields()[field].go == go


@pytest.mark.parametrize(
    ("spelling", "parts"),
    [
        ("List[V1Container]", ("list", "V1Container")),
        ("list[V1Container]", ("list", "V1Container")),
        ("Dict[str, str]", ("map", "str")),
        ("dict(str, str)", ("map", "str")),
        ("Dict[str, List[str]]", ("map", "List[str]")),
        ("dict(str, list[str])", ("map", "list[str]")),
        ("V1PodSpec", ("", "V1PodSpec")),
        ("int", ("", "int")),
    ],
)
def test_both_client_spellings(spelling: str, parts: tuple[str, str]) -> None:
    assert split_type(spelling) == parts


def test_every_extra_kind_has_a_model_with_metadata() -> None:
    for res in EXTRA_RESOURCES:
        ftype = kind_type(res)
        assert ftype is not ANY, res
        assert {"apiVersion", "kind", "metadata"} <= set(ftype.fields()), res


def test_status_subresources_follow_the_models() -> None:
    by_plural = {res.plural: res for res in EXTRA_RESOURCES}
    assert has_status(by_plural["poddisruptionbudgets"])
    assert has_status(by_plural["persistentvolumes"])
    assert not has_status(by_plural["roles"])
    assert not has_status(by_plural["priorityclasses"])


def test_descriptions_come_from_the_client() -> None:
    replicas = model_type("V1DeploymentSpec").fields()["replicas"]
    assert "desired pods" in replicas.description
    assert model_type("V1Deployment").description.startswith("Deployment enables")
