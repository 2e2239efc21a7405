"""One reading of Spark's conf for sizes: malformed settings are InvalidObjectErrors naming the key."""

from __future__ import annotations

import pytest

from bridge import errors
from bridge.adapters.spark import application, sizing
from tests.builders import spark


@pytest.mark.parametrize("raw", ["abc", "-3", "2.5", " "])
def test_a_malformed_executor_count_in_the_conf_is_an_invalid_object(raw: str) -> None:
    with pytest.raises(errors.InvalidObjectError) as caught:
        sizing.executors_from_conf({"spark.executor.instances": raw})
    assert str(caught.value) == f"spark.executor.instances must be a non-negative integer, got {raw!r}"


def test_dynamic_allocation_settings_are_checked_too() -> None:
    with pytest.raises(errors.InvalidObjectError, match=r"spark\.dynamicAllocation\.minExecutors"):
        sizing.executors_from_conf(
            {"spark.dynamicAllocation.enabled": "true", "spark.dynamicAllocation.minExecutors": "x"}
        )


def test_a_malformed_overhead_factor_is_an_invalid_object() -> None:
    with pytest.raises(errors.InvalidObjectError, match="memoryOverheadFactor must be a number, got 'lots'"):
        sizing.executors_from_conf({"spark.executor.instances": "1", "spark.kubernetes.memoryOverheadFactor": "lots"})


def test_executors_from_conf_by_spark_rules() -> None:
    conf = {"spark.executor.instances": "3", "spark.executor.memory": "2g", "spark.executor.cores": "2"}
    # 2 GiB + max(10%, 384 MiB) overhead, per executor
    assert sizing.executors_from_conf(conf) == [sizing.PodSize(6000, 3 * (2048 + 384))]
    assert sizing.executors_from_conf({"spark.executor.instances": "0"}) == []
    python = sizing.executors_from_conf({**conf, "spark.kubernetes.resource.type": "python"})
    assert python == [sizing.PodSize(6000, 3 * (2048 + 819))]


def test_an_application_and_the_conf_it_would_write_are_sized_alike() -> None:
    """The SparkApplication path reads its own fields first, then the same conf keys as a driver's conf."""
    app = spark.app(executor={"instances": 3, "memory": "2g", "cores": 2}, mode="client")["spec"]
    conf = {"spark.executor.instances": "3", "spark.executor.memory": "2g", "spark.executor.cores": "2"}
    assert application.min_resources(app) == sizing.total(sizing.executors_from_conf(conf))


def test_role_fields_outrank_the_conf() -> None:
    role = sizing.role({"spark.driver.memory": "1g", "spark.driver.cores": "4"}, "driver", {"memory": "3g"})
    assert (role.memory, role.cores, role.pyspark_memory) == ("3g", "4", None)
    with pytest.raises(errors.InvalidObjectError, match=r"gpu\.quantity must be an integer"):
        sizing.role({}, "executor", {"gpu": {"name": "nvidia.com/gpu", "quantity": "many"}})


@pytest.mark.parametrize("memory", ["9" * 400, "9" * 400 + "g", "99999999999p"])
def test_a_memory_size_past_any_machine_is_a_quantity_error_not_an_overflow(memory: str) -> None:
    with pytest.raises(errors.QuantityError, match=r"executor memory: .* is larger than any machine"):
        sizing.executors_from_conf({"spark.executor.instances": "1", "spark.executor.memory": memory})


@pytest.mark.parametrize("factor", ["1e400", "inf", "nan", 10**400])
def test_an_overhead_factor_that_is_not_finite_is_a_quantity_error(factor: object) -> None:
    with pytest.raises(errors.QuantityError, match="memoryOverheadFactor must be a finite number"):
        sizing.role({"spark.executor.memoryOverheadFactor": factor}, "executor")  # type: ignore[dict-item]


def test_a_gpu_quantity_past_an_integer_is_an_invalid_object() -> None:
    with pytest.raises(errors.InvalidObjectError, match=r"executor gpu.quantity must be an integer, got inf"):
        sizing.role({}, "executor", {"gpu": {"name": "nvidia.com/gpu", "quantity": float("inf")}})


def test_an_overhead_factor_that_overflows_the_overhead_is_a_quantity_error() -> None:
    role = sizing.role({"spark.executor.memory": "4g", "spark.executor.memoryOverheadFactor": "1e308"}, "executor")
    with pytest.raises(errors.QuantityError, match=r"executor memoryOverheadFactor 1e[+]308 makes an overhead larger"):
        sizing.pod_size(role, non_jvm=False, what="executor")
