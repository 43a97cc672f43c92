"""tilevit from Python: compile Vision Transformers for the modelled tile processor, run
them on the device model with resident weights, and read their profiles as NumPy arrays
and pandas tables (docs/PYTHON.md).

    import tilevit
    program = tilevit.compile(model="small", machine="test16")
    device = tilevit.Device(program)
    result = device()                      # the seed's default images
    print(result.embeddings.shape, result.cycles, result.profile.to_pandas("kernel"))
"""
from ._tilevit import DoesNotFit
from ._program import Program, compile, load
from ._device import CallResult, Device, Profile, reference, read_profile

__all__ = ["compile", "load", "Program", "Device", "CallResult", "Profile", "reference", "read_profile",
           "DoesNotFit"]
