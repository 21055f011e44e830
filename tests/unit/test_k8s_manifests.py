"""The Kubernetes manifests pass schema validation offline: every document of deploy/k8s/
against the Kubernetes OpenAPI schemas that the kubernetes-validate package ships (kubeval's
method, strict: unknown fields refused), for the oldest and the newest Kubernetes it covers.

What it checks: each kind exists in that apiVersion at that Kubernetes version (a removed API
such as policy/v1beta1 fails), required fields, field types and enumerations, no unknown or
misspelt field. What it cannot check without a cluster: admission, defaulting, immutable
fields, name formats, that the Secret exists. `kubectl apply --dry-run=client` cannot replace it
here: kubectl needs an API server's discovery even with --validate=false; kubeconform is no
PyPI, npm or Debian package, and downloads its schemas at run time.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from tests.conftest import needs

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = sorted((ROOT / "deploy" / "k8s").glob("*.yaml"))
OLDEST = "1.30"  # an older release still common on managed clusters, checked besides the newest


def validator():
    try:
        import kubernetes_validate
    except ImportError:
        needs("kubernetes-validate", "pip install -c deploy/constraints.txt -e '.[test]'")
    return kubernetes_validate


def documents() -> list[tuple[str, dict]]:
    return [
        (f"{p.name}:{doc['kind']}", doc)
        for p in MANIFESTS
        for doc in yaml.safe_load_all(p.read_text())
        if doc
    ]


def test_there_are_manifests():
    kinds = {name.split(":")[1] for name, _ in documents()}
    assert kinds == {
        "ConfigMap",
        "Deployment",
        "Job",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "Secret",
        "Service",
    }


@pytest.mark.parametrize("version", [OLDEST, "latest"])
def test_every_manifest_passes_kubernetes_schema_validation(version):
    kv = validator()
    version = kv.latest_version() if version == "latest" else version
    failures = []
    for name, doc in documents():
        try:
            kv.validate(doc, version, strict=True)
        except kv.ValidationError as exc:
            failures.append(f"{name}: {'.'.join(map(str, exc.path))}: {exc.message}")
        except kv.SchemaNotFoundError:
            failures.append(f"{name}: no {doc['apiVersion']} {doc['kind']} in Kubernetes {version}")
    assert failures == [], "\n".join(failures)


def test_the_validation_is_not_vacuous():
    kv = validator()
    deployment = dict(documents())["deployment.yaml:Deployment"]
    misspelt = copy.deepcopy(deployment)
    misspelt["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["paths"] = (
        "/health/live"
    )
    wrong_type = copy.deepcopy(deployment)
    wrong_type["spec"]["replicas"] = "two"
    removed_api = {
        **dict(documents())["pdb.yaml:PodDisruptionBudget"],
        "apiVersion": "policy/v1beta1",
    }
    for bad in (misspelt, wrong_type):
        with pytest.raises(kv.ValidationError):
            kv.validate(bad, OLDEST, strict=True)
    with pytest.raises(kv.SchemaNotFoundError):
        kv.validate(removed_api, OLDEST, strict=True)
