"""Bad inputs raise the right exception, with the command line's one-line message naming the
file or field at fault."""
import numpy as np
import pytest

import tilevit
from test_weights import read_safetensors
from conftest import cli


def test_missing_checkpoint_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such-dir"):
        tilevit.compile(model=str(tmp_path / "no-such-dir"), machine="test16")


def test_missing_package_and_plan(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.tvpkg"):
        tilevit.load(tmp_path / "absent.tvpkg")
    with pytest.raises(FileNotFoundError, match="absent.json"):
        tilevit.compile(model="small", machine="test16", plan=tmp_path / "absent.json")


def test_damaged_package(tmp_path):
    (tmp_path / "bad.tvpkg").write_bytes(b"not a package")
    with pytest.raises(ValueError, match="bad.tvpkg"):
        tilevit.load(tmp_path / "bad.tvpkg")


def test_bad_values_name_the_field():
    with pytest.raises(ValueError, match="no-such-preset"):
        tilevit.compile(model="no-such-preset", machine="test16")
    with pytest.raises(FileNotFoundError, match="no-such-machine"):  # not a built-in machine: a file
        tilevit.compile(model="small", machine="no-such-machine")
    with pytest.raises(ValueError, match="fp8_scale"):
        tilevit.compile(model="small", machine="test16", fp8_scale=99)
    with pytest.raises(ValueError, match="layers"):
        tilevit.compile(model="small", machine="test16", layers=7)


def test_does_not_fit_names_the_worst_tile():
    with pytest.raises(tilevit.DoesNotFit, match=r"does not fit test16: tile \d+ needs") as caught:
        tilevit.compile(model="so400m", machine="test16", layers=1, optimization_steps=0)
    assert caught.value.needed > caught.value.available
    assert isinstance(caught.value, ValueError)


def test_bad_weights_name_the_tensor(tmp_path):
    cli("export-weights", tmp_path / "w.safetensors", "--preset", "small")
    tensors = read_safetensors(tmp_path / "w.safetensors")
    name = "vision_model.post_layernorm.weight"
    wrong = dict(tensors, **{name: np.zeros(3, np.float32)})
    with pytest.raises(ValueError, match=name):
        tilevit.compile(model="small", machine="test16", weights=wrong, optimization_steps=0)
    missing = {k: v for k, v in tensors.items() if k != name}
    with pytest.raises(ValueError, match=name):
        tilevit.compile(model="small", machine="test16", weights=missing, optimization_steps=0)


def test_bad_images(small_program, tmp_path):
    device = tilevit.Device(small_program)
    with pytest.raises(FileNotFoundError, match="absent.png"):
        device([str(tmp_path / "absent.png")])
    with pytest.raises(ValueError, match="images: expected float32"):
        device(np.zeros((1, 3, 5, 5), np.float32))
    (tmp_path / "bad.png").write_bytes(b"not an image")
    with pytest.raises(ValueError, match="bad.png"):
        device([str(tmp_path / "bad.png")])


def test_unwritable_output(small_program, tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError, match="file/model.tvpkg"):
        small_program.save(tmp_path / "file" / "model.tvpkg")



def test_micro_batches_name_the_field():
    with pytest.raises(ValueError, match="micro_batches 2: machine test16 has one chip"):
        tilevit.compile(model="small", machine="test16", micro_batches=2)
    with pytest.raises(ValueError, match="micro_batches 65: expected 1 to 64"):
        tilevit.compile(model="siglip2-tiny", machine="test16x2", micro_batches=65)
