"""A machine of several chips from Python: compile(machine="test16x2") pipelines the model as
`tilevit run --machine test16x2` does, with the same package, embeddings and cycles."""
import json

import numpy as np
import pytest

import tilevit
from conftest import cli

MODEL, MACHINE = "siglip2-tiny", "test16x2"


@pytest.fixture(scope="module")
def pipeline():
    return tilevit.compile(model=MODEL, machine=MACHINE, micro_batches=2)


@pytest.fixture(scope="module")
def cli_pipeline(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli_pipeline")
    done = cli("run", "--preset", MODEL, "--machine", MACHINE, "--micro-batches", 2, "--out", out / "out",
               "--save-embeddings", out / "e.npy", "--json")
    return out, json.loads(done.stdout)


def test_same_package_embeddings_and_cycles_as_the_cli(pipeline, cli_pipeline):
    out, report = cli_pipeline
    assert pipeline.chips == 2 and pipeline.micro_batches == 2 and pipeline.images_per_call == 2
    assert pipeline.sha256 == report["package_sha256"]
    result = tilevit.Device(pipeline)()
    assert result.embeddings.shape == (2, pipeline.config["hidden_size"])
    assert open(out / "e.npy", "rb").read().endswith(result.embeddings.tobytes())
    assert result.cycles == report["calls"][-1]["device_cycles"] == pipeline.estimated_cycles


def test_device_numerics_reference_is_the_pipelines_bit_for_bit(pipeline):
    images = np.random.default_rng(3).uniform(-1, 1, (2, 3, pipeline.image_size, pipeline.image_size)).astype(np.float32)
    result = tilevit.Device(pipeline)(images)
    assert tilevit.reference(pipeline, images, fp32=False)["device"].tobytes() == result.embeddings.tobytes()
    with pytest.raises(ValueError, match=r"images: expected float32 \[2, 3,"):
        tilevit.Device(pipeline)(images[:1])


def test_tables_per_stage_plan_and_package_round_trips(pipeline, tmp_path):
    steps = pipeline.steps()
    assert set(steps["stage"]) == {0, 1}
    assert set(pipeline.kernel_calls()["stage"]) == {0, 1}
    assert len(pipeline.memory_map()) == 2 * 16
    assert pipeline.summary["chips"] == 2 and len(pipeline.summary["stages"]) == 2
    assert "tilevit_pipeline_plan" in pipeline.plan
    pinned = tilevit.compile(model=MODEL, machine=MACHINE, micro_batches=2, plan=pipeline.plan)
    assert pinned.sha256 == pipeline.sha256
    pipeline.save(tmp_path / "p.tvpkg")
    loaded = tilevit.load(tmp_path / "p.tvpkg")
    assert loaded.sha256 == pipeline.sha256 and loaded.chips == 2 and loaded.micro_batches == 2


def test_a_stage_plan_missing_an_op_names_the_stage(pipeline):
    plan = json.loads(json.dumps(pipeline.plan))
    plan["stages"][1]["plan"]["attention"].pop("layer.attention")
    with pytest.raises(ValueError, match=r"plan: stages\[1\]\.plan: attention\.layer\.attention: missing"):
        tilevit.compile(model=MODEL, machine=MACHINE, micro_batches=2, plan=plan)


def test_the_profile_is_the_systems_as_the_cli_writes_it(pipeline, cli_pipeline, tmp_path):
    out, report = cli_pipeline
    result = tilevit.Device(pipeline)()
    profile = result.profile
    assert profile.totals()["span"] == result.cycles
    profile.save(tmp_path / "profile.tvprof")
    assert (tmp_path / "profile.tvprof").read_bytes() == (out / "out" / "profile.tvprof").read_bytes()
    tiles = profile.to_pandas("tile")
    assert len(tiles) > 0
    expected = json.loads(cli("profile", "query", out / "out" / "profile.tvprof", "--group-by", "operation",
                              "--limit", 100000, "--json").stdout)
    assert profile.query("operation", as_pandas=False) == expected["rows"]
    assert profile.bounds() == expected["bounds"]
    assert any("bound_tile_cycles" in row for row in expected["rows"])
    one_chip = tilevit.Device(tilevit.compile(model=MODEL, machine="test16"))().profile
    compared = one_chip.compare(profile, tmp_path / "compare.html")
    assert compared["steps"]["total_delta"] == compared["span_delta"] == result.cycles - one_chip.totals()["span"]
