from __future__ import annotations

from scheduler.api import resources

GPU = "nvidia.com/gpu"


def test_parse_units() -> None:
    r = resources.parse({"cpu": "500m", "memory": "1Gi", "pods": "3", GPU: "2"})
    assert (r.cpu, r.memory, r.get("pods"), r.get(GPU)) == (500, 2**30, 3, 2000)


def test_add_sub_drop_zero_dimensions() -> None:
    a = resources.make(cpu=1000, memory=10)
    b = resources.make(cpu=1000)
    assert (a + b) - b == a
    assert (a - a).is_empty()
    assert (b - a).memory == -10


def test_missing_dimension_is_zero_and_unasked_dimension_fits() -> None:
    node = resources.make(cpu=4000, memory=2**30)
    assert resources.make(cpu=1000).fits_in(node)
    assert not resources.make(cpu=1000, scalars={GPU: 1000}).fits_in(node)
    overcommitted = resources.make(cpu=4000, memory=-5)
    assert resources.make(cpu=1000).fits_in(overcommitted)  # memory is not asked for


def test_vector_round_trip() -> None:
    dims = ("cpu", "memory", "pods", GPU)
    r = resources.make(cpu=1500, memory=7, pods=1, scalars={GPU: 1000})
    assert resources.from_vector(resources.vector(r, dims), dims) == r
    assert resources.to_api(r) == {"cpu": "1500m", "memory": "7", "pods": "1", GPU: "1"}
