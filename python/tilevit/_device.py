"""tilevit.Device (resident weights, calls), their Profile, and tilevit.reference."""
import html
import os

from . import _tilevit
from ._program import Program, _model_spec
from ._records import records

_LEVELS = {"kernel": "kernel", "operation": "operation", "tile": "tile", "kind": "kind", "phase": "phase"}


def _images(program, images):
    """(array or None, paths) for the native call: float32 [B,3,S,S], image paths, or None."""
    if images is None:
        return None, []
    if isinstance(images, (str, os.PathLike)):
        images = [images]
    if isinstance(images, (list, tuple)) and all(isinstance(i, (str, os.PathLike)) for i in images):
        paths = [os.fspath(i) for i in images]
        for p in paths:
            if not os.path.isfile(p):
                raise FileNotFoundError(p + ": cannot open image: No such file or directory")
        return None, paths
    import numpy as np
    if hasattr(images, "detach"):  # a torch.Tensor
        images = images.detach().float().cpu().numpy()
    return np.ascontiguousarray(images, dtype=np.float32), []


class Profile:
    """The modelled profile of one call: where the cycles go, by step, kernel, operation or tile."""

    def __init__(self, native):
        self._native = native

    def totals(self):
        """The whole call: span, cycles summed over tiles by kind, model, machine, plan, package."""
        return self._native.totals()

    def query(self, group_by="kind", view="model", as_pandas=True):
        """As `tilevit profile query --group-by G --view V --json`: one row per group."""
        return records(self._native.query(group_by, view), as_pandas)

    def bounds(self):
        """As `tilevit profile query --json`'s "bounds": the call's, each operation's and each step's
        lower bound next to the achieved cycles (ideal against achieved)."""
        return self._native.bounds()

    def to_pandas(self, level="step"):
        """A table per step (start, end, cycles), or per kernel, operation or tile (query rows)."""
        if level == "step":
            return records(self._native.steps(), True)
        if level not in _LEVELS:
            raise ValueError("level %r: expected step, kernel, operation, tile, kind or phase" % (level,))
        return self.query(_LEVELS[level])

    def diff(self, other, limit=20):
        """As `tilevit profile diff A B --json`: the steps that changed, largest first."""
        return self._native.diff(other._native, int(limit))

    def compare(self, other, path=None, names=("A", "B"), limit=20):
        """As `tilevit profile compare A B --json` (differences are other - self), and the page
        compare.html (both timelines on one axis, the tables by cycle difference) when path is given.
        names: what the page and the report call each side."""
        if not isinstance(other, Profile):
            raise ValueError("other: expected a tilevit.Profile, got " + type(other).__name__)
        name_a, name_b = (str(n) for n in names)
        return self._native.compare(other._native, "" if path is None else os.fspath(path), name_a, name_b, int(limit))

    def save(self, path):
        """profile.tvprof, as `tilevit run` writes it."""
        self._native.save(os.fspath(path))

    def save_html(self, path):
        """The timeline viewer (model.html)."""
        self._native.save_html(os.fspath(path))

    def save_trace(self, path):
        """The Chrome/Perfetto trace (trace.json)."""
        self._native.save_trace(os.fspath(path))

    def _repr_html_(self):
        t = self.totals()
        rows = "".join("<tr><td>%s</td><td>%s</td><td>%.1f%%</td></tr>" % (
            html.escape(r["key"]), format(r["cycles"], ","), 100 * r["share"]) for r in self.query(as_pandas=False))
        return ("<b>%s</b> on %s: %s cycles a call<br><table><tr><th>kind</th><th>tile cycles</th><th>share</th></tr>"
                "%s</table>" % (html.escape(t["model"]), html.escape(t["machine"]), format(t["span"], ","), rows))

    def __repr__(self):
        t = self.totals()
        return "<tilevit.Profile %s on %s: %d cycles>" % (t["model"], t["machine"], t["span"])


def read_profile(path):
    """A profile.tvprof written by `tilevit run` or Profile.save."""
    return Profile(_tilevit._read_profile(os.fspath(path)))


class CallResult:
    """One call's embeddings (NumPy), its modelled cycles and host times, and its Profile."""

    def __init__(self, program, figures):
        self._program = program
        self.embeddings = figures.pop("embeddings")
        self.cycles = figures["cycles"]
        self.figures = figures

    @property
    def profile(self):
        return Profile(_tilevit._profile(self._program._native))

    def __repr__(self):
        return "<tilevit.CallResult embeddings %s, %d cycles>" % (tuple(self.embeddings.shape), self.cycles)


class Device:
    """The device model with the program's weights resident (uploaded once)."""

    def __init__(self, program, threads=0):
        self.program = program
        self._native = _tilevit._Device(program._native, int(threads))

    upload_seconds = property(lambda self: self._native.upload_seconds)

    def __call__(self, images=None, seed=0):
        """One call: images as float32 [B,3,S,S] (preprocessed), image paths, or None (the random images of seed)."""
        array, paths = _images(self.program, images)
        return CallResult(self.program, self._native.call(array, paths, int(seed)))

    @property
    def profile(self):
        return Profile(_tilevit._profile(self.program._native))


def reference(program, images=None, seed=0, fp32=True, device=True, *, weights=None, layers=None, batch=1,
              fp8_scale=-4, calibrated_scales=False):
    """The FP32 and device-numerics references as {"fp32": array, "device": array}.

    program: a Program (the device numerics with its GEMM and attention splits: bit for bit its
    embeddings), or a model as compile() takes it (a preset, a Hugging Face directory or a config
    dict with `weights`; then `layers`, `batch`, `fp8_scale`, `calibrated_scales` and `seed` say the
    rest, and the device numerics do not split sums, as `tilevit reference` without --package)."""
    if isinstance(program, Program):
        native = program._native
    else:
        spec = _model_spec(program, weights, layers)
        spec.update(batch=int(batch), fp8_scale=int(fp8_scale), seed=int(seed), calibrated_scales=bool(calibrated_scales))
        native = _tilevit._model(spec)
    array, paths = _images(program, images)
    return _tilevit._reference(native, array, paths, int(seed), bool(fp32), bool(device))
