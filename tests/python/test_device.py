"""Device(compile(model="small", machine="test16")) against `tilevit run` of the same model:
the same package, embeddings byte for byte, cycles, and profile."""
import hashlib

import numpy as np
import pytest

import tilevit


def npy_data(path):
    """The data section of a .npy file (the bytes after its header)."""
    raw = open(path, "rb").read()
    return raw, np.load(path)


def test_same_package_as_cli(cli_run, small_program):
    out, report = cli_run
    package = (out / "out" / "model.tvpkg").read_bytes()
    assert small_program.sha256 == hashlib.sha256(package).hexdigest()


def test_embeddings_cycles_and_profile_equal_the_cli(cli_run, small_program, tmp_path):
    out, report = cli_run
    device = tilevit.Device(small_program)
    results = [device() for _ in range(3)]
    raw, cli_embeddings = npy_data(out / "embeddings.npy")
    for result in results:
        assert result.embeddings.dtype == np.float32
        assert result.embeddings.shape == cli_embeddings.shape
        assert raw.endswith(result.embeddings.tobytes())  # the .npy's data, byte for byte
    assert [r.cycles for r in results] == [c["device_cycles"] for c in report["calls"]]
    results[-1].profile.save(tmp_path / "profile.tvprof")
    assert (tmp_path / "profile.tvprof").read_bytes() == (out / "out" / "profile.tvprof").read_bytes()
    cli_profile = tilevit.read_profile(out / "out" / "profile.tvprof")
    assert results[0].profile.totals() == cli_profile.totals()
    assert results[0].profile.totals()["span"] == results[0].cycles


def test_one_and_two_threads_give_the_same_bytes(small_program):
    one = tilevit.Device(small_program, threads=1)().embeddings
    two = tilevit.Device(small_program, threads=2)().embeddings
    assert one.tobytes() == two.tobytes()
    program_two = tilevit.compile(model="small", machine="test16", threads=2)
    assert program_two.sha256 == small_program.sha256


def test_images_as_arrays_and_references(small_program):
    device = tilevit.Device(small_program)
    default = device()
    refs = tilevit.reference(small_program)
    assert refs["device"].tobytes() == default.embeddings.tobytes()  # the device numerics, bit for bit
    cosine = float(np.dot(refs["fp32"][0], default.embeddings[0]) /
                   (np.linalg.norm(refs["fp32"][0]) * np.linalg.norm(default.embeddings[0])))
    assert cosine > 0.99
    rng = np.random.default_rng(1)
    images = rng.uniform(-1, 1, (1, 3, small_program.image_size, small_program.image_size)).astype(np.float32)
    given = device(images)
    assert given.embeddings.tobytes() == tilevit.reference(small_program, images, fp32=False)["device"].tobytes()
    assert given.embeddings.tobytes() != default.embeddings.tobytes()


def test_references_of_a_model_without_a_compile_are_the_clis(tmp_path):
    """tilevit.reference(model) against `tilevit reference` (no package: sums not split)."""
    from conftest import cli
    cli("reference", "--preset", "small", "--fp8-scale", "-3", "--save-fp32", tmp_path / "f.npy",
        "--save-device", tmp_path / "d.npy", "--json")
    refs = tilevit.reference("small", fp8_scale=-3)
    assert open(tmp_path / "f.npy", "rb").read().endswith(refs["fp32"].tobytes())
    assert open(tmp_path / "d.npy", "rb").read().endswith(refs["device"].tobytes())
    assert tilevit.reference("small", fp8_scale=-5)["device"].tobytes() != refs["device"].tobytes()
    with pytest.raises(ValueError, match="fp8_scale 40"):
        tilevit.reference("small", fp8_scale=40)


def test_program_records_and_profile_tables(small_program, tmp_path):
    p = small_program
    assert p.estimated_cycles > 0 and len(p.sha256) == 64
    assert p.plan["machine"] == "test16" and p.plan["batch"] == 1
    steps = p.steps()
    assert len(steps) == p.summary["supersteps"]
    calls = p.kernel_calls()
    assert len(calls) == p.summary["kernel_calls"] and set(calls["kind"]) >= {"gemm_fp8"}
    assert p.memory_summary()["peak_bytes"] <= p.memory_summary()["capacity"]
    profile = tilevit.Device(p)().profile
    for level in ("step", "kernel", "operation", "tile"):
        assert len(profile.to_pandas(level)) > 0
    kinds = profile.query("kind", as_pandas=False)
    assert abs(sum(r["share"] for r in kinds) - 1) < 1e-6
    assert "<table>" in profile._repr_html_()
    profile.save_html(tmp_path / "model.html")
    profile.save_trace(tmp_path / "trace.json")
    assert (tmp_path / "model.html").stat().st_size > 0 and (tmp_path / "trace.json").stat().st_size > 0
    p.save(tmp_path / "model.tvpkg")
    assert tilevit.load(tmp_path / "model.tvpkg").sha256 == p.sha256


def test_compare_is_the_clis_page_and_report(small_program, tmp_path):
    """Profile.compare against `tilevit profile compare A B -o compare.html --json`: the same
    page byte for byte and the same report; its step table totals the span difference."""
    import json
    from conftest import cli
    searched = tilevit.Device(small_program)().profile
    heuristic = tilevit.Device(tilevit.compile(model="small", machine="test16", optimization_steps=0))().profile
    a, b = str(tmp_path / "a.tvprof"), str(tmp_path / "b.tvprof")
    heuristic.save(a)
    searched.save(b)
    report = heuristic.compare(searched, tmp_path / "compare.html", names=(a, b), limit=1000)
    done = cli("profile", "compare", a, b, "-o", tmp_path / "cli.html", "--limit", 1000, "--json")
    expected = json.loads(done.stdout)
    expected["output"] = str(tmp_path / "compare.html")
    assert report == expected
    assert (tmp_path / "compare.html").read_bytes() == (tmp_path / "cli.html").read_bytes()
    assert report["span_delta"] == searched.totals()["span"] - heuristic.totals()["span"]
    assert report["steps"]["total_delta"] == report["span_delta"]
    rows = report["steps"]["rows"]
    assert len(rows) == report["steps"]["count"] and sum(r["delta"] for r in rows) == report["span_delta"]
    assert "output" not in searched.compare(heuristic)  # no page unless a path is given
    with pytest.raises(ValueError, match="other"):
        searched.compare("b.tvprof")


def test_plan_round_trip(small_program):
    pinned = tilevit.compile(model="small", machine="test16", plan=small_program.plan)
    assert pinned.estimated_cycles == small_program.estimated_cycles
    assert pinned.plan == small_program.plan


def test_image_paths_equal_the_cli(small_program, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from conftest import cli
    pixels = np.random.default_rng(2).integers(0, 256, (40, 48, 3), dtype=np.uint8)
    plt.imsave(tmp_path / "image.png", pixels)
    cli("run", "--preset", "small", "--machine", "test16", "--image", tmp_path / "image.png", "--out", tmp_path / "out",
        "--save-embeddings", tmp_path / "e.npy", "--json")
    result = tilevit.Device(small_program)([str(tmp_path / "image.png")])
    assert open(tmp_path / "e.npy", "rb").read().endswith(result.embeddings.tobytes())
