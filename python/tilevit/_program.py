"""tilevit.compile and tilevit.load: the compile pipeline as `tilevit run` drives it."""
import json
import os
import re

from . import _tilevit
from ._records import records

_LAYER = re.compile(r"^vision_model\.encoder\.layers\.(\d+)\.")


def _tensors(weights):
    """A dict of arrays (NumPy, or anything with .numpy(): a PyTorch state_dict) as float32 NumPy."""
    import numpy as np
    if not isinstance(weights, dict):
        raise ValueError("weights: expected a dict of arrays with Hugging Face names, got " + type(weights).__name__)
    out = {}
    for name, value in weights.items():
        if hasattr(value, "detach"):  # a torch.Tensor
            value = value.detach().float().cpu().numpy()
        out[str(name)] = np.ascontiguousarray(value, dtype=np.float32)
    return out


def _held_layers(tensors):
    found = [int(m.group(1)) + 1 for m in map(_LAYER.match, tensors) if m]
    return max(found, default=0)


def _model_spec(model, weights, layers):
    """The model as the spec's preset, model_dir or config_json, and in-memory tensors."""
    spec = {}
    if isinstance(model, dict):
        spec["config_json"] = json.dumps(model)
    elif isinstance(model, (str, os.PathLike)) and (os.sep in os.fspath(model) or os.path.isdir(model)):
        path = os.fspath(model)
        if not os.path.isdir(path):
            raise FileNotFoundError(path + ": no such Hugging Face checkpoint directory")
        if weights is not None:
            raise ValueError("weights: a checkpoint directory holds its own weights (drop one)")
        spec["model_dir"] = path
    elif isinstance(model, str):
        spec["preset"] = model
    else:
        raise ValueError("model: expected a preset name, a Hugging Face directory or a config dict, got " +
                         type(model).__name__)
    if weights is not None:
        tensors = _tensors(weights)
        held = _held_layers(tensors)
        if layers is None:
            layers = held
        elif held < layers:
            raise ValueError("weights: the tensors hold %d encoder layer%s, %d asked (layers)" %
                             (held, "" if held == 1 else "s", layers))
        spec["tensors"] = tensors
    spec["layers"] = layers
    return spec


def _plan_spec(plan):
    if plan is None:
        return {}
    if isinstance(plan, dict):
        return {"plan_json": json.dumps(plan), "plan_source": "plan"}
    path = os.fspath(plan)
    if not os.path.isfile(path):
        raise FileNotFoundError(path + ": cannot read the plan file: No such file or directory")
    with open(path, encoding="utf-8") as f:
        return {"plan_json": f.read(), "plan_source": path}


def _progress(progress):
    """None, a callable, or True: the lines on stderr with the seconds since the compile began."""
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
    if progress is not True:
        raise ValueError("progress: expected None, True or a callable, got " + type(progress).__name__)
    import sys
    import time
    start = time.monotonic()
    return lambda line: print("[%7.2fs] %s" % (time.monotonic() - start, line), file=sys.stderr, flush=True)


def compile(model="so400m", machine="c600", batch=1, fp8_scale=-4, plan=None, optimization_steps=None, layers=None,
            weights=None, seed=0, calibrated_scales=False, exchange_stream_words=None, search_seconds=0.0,
            profile="phase", profile_iterations=1, threads=0, micro_batches=1, progress=None):
    """Compiles a model for a machine, as `tilevit run` does (the plan search, 8 candidates by default).

    model: a preset name ("so400m", "small", ...), a Hugging Face checkpoint directory, or a
    Hugging Face config dict (then give `weights`). weights: a dict of arrays with Hugging Face
    names (a state_dict); default the random test model of `seed`. plan: a plan file's path or
    dict (then no search unless optimization_steps says). profile: "graph", "phase", "kernel"
    or None (no profiling). machine: one chip ("c600"), or several ("c600x2"): the model is then
    pipelined over them as `tilevit run --machine c600x2` does, a call carrying micro_batches x batch
    images. progress: None (quiet), True (the plan search's lines on stderr, as `tilevit run`
    prints them), or a callable given each line. Raises DoesNotFit naming the worst tile when the
    model is too big.
    """
    spec = _model_spec(model, weights, layers)
    spec.update(_plan_spec(plan))
    if optimization_steps is None:
        optimization_steps = 0 if plan is not None else 8
    spec.update(machine=str(machine), batch=int(batch), fp8_scale=int(fp8_scale), seed=int(seed),
                calibrated_scales=bool(calibrated_scales), exchange_stream_words=exchange_stream_words,
                optimization_steps=int(optimization_steps), search_seconds=float(search_seconds),
                profile=profile, profile_iterations=str(profile_iterations), threads=int(threads),
                micro_batches=int(micro_batches), progress=_progress(progress))
    return Program(_tilevit._compile(spec))


def load(path, seed=0):
    """Reads and verifies a package (.tvpkg); its weights: the random test model of `seed`."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(path + ": cannot open: No such file or directory")
    return Program(_tilevit._load(path, int(seed)))


class Program:
    """A compiled (or loaded) package: its plan, figures, steps and kernel calls."""

    def __init__(self, native):
        self._native = native

    estimated_cycles = property(lambda self: self._native.estimated_cycles, doc="modelled cycles of one call")
    sha256 = property(lambda self: self._native.sha256, doc="the package's SHA-256 (hex)")
    plan = property(lambda self: self._native.plan, doc="the plan, as the plan file's dict (compile(plan=...))")
    search_report = property(lambda self: self._native.search_report, doc="the plan search's report, or None")
    plan_origin = property(lambda self: self._native.plan_origin)
    compile_seconds = property(lambda self: self._native.compile_seconds)
    summary = property(lambda self: self._native.summary, doc="tiles, supersteps, exchange and weight bytes, cycles")
    config = property(lambda self: self._native.config, doc="the model as a Hugging Face config dict")
    model = property(lambda self: self._native.model)
    layers = property(lambda self: self._native.layers)
    batch = property(lambda self: self._native.batch)
    image_size = property(lambda self: self._native.image_size)
    machine = property(lambda self: self._native.machine)
    clock_hz = property(lambda self: self._native.clock_hz)
    package_bytes = property(lambda self: self._native.package_bytes)
    chips = property(lambda self: self._native.chips, doc="chips the program runs on (a pipeline: one stage each)")
    micro_batches = property(lambda self: self._native.micro_batches, doc="micro-batches of `batch` images a call")
    images_per_call = property(lambda self: self.batch * self.micro_batches)

    def steps(self, as_pandas=True):
        """One record per superstep (as `tilevit compile --steps --json`; a pipeline's with its stage)."""
        return records(self._native._steps(), as_pandas)

    def kernel_calls(self, as_pandas=True):
        """One record per kernel call: step, tile, kind, operation, dims, cycles, FLOPs (and stage)."""
        return records(self._native._kernel_calls(), as_pandas)

    def memory_map(self, as_pandas=True):
        """One record per tile (a pipeline: per stage and tile): the memory map's summary."""
        return records(self._native._memory_tiles(), as_pandas)

    def memory_summary(self):
        """The fullest tile and the totals of the memory map."""
        tiles = self._native._memory_tiles()
        fullest = max(tiles, key=lambda t: t["peak_bytes"])
        summary = {"tiles": len(tiles), "capacity": fullest["capacity"], "peak_bytes": fullest["peak_bytes"],
                   "fullest_tile": fullest["tile"], "smallest_largest_hole": min(t["largest_hole"] for t in tiles)}
        if "stage" in fullest:
            summary["fullest_stage"] = fullest["stage"]
        return summary

    def save(self, path):
        """Writes the package, byte for byte what `tilevit compile --package` writes."""
        self._native.save(os.fspath(path))

    def __repr__(self):
        chips = "" if self.chips == 1 else " (%d chips, %d micro-batch%s)" % (
            self.chips, self.micro_batches, "" if self.micro_batches == 1 else "es")
        return "<tilevit.Program %s, %d layer(s), batch %d on %s%s: %d cycles, sha256 %s...>" % (
            self.model, self.layers, self.batch, self.machine, chips, self.estimated_cycles, self.sha256[:12])
