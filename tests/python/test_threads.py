"""The GIL is released while tilevit compiles and calls the device: another Python thread
keeps running through the whole native call (with the GIL held it would stop until the end)."""
import sys
import threading
import time

import tilevit


def ticks_during(work):
    """Runs work() on a thread; returns its (start, end) and the main thread's tick times meanwhile."""
    span = {}

    def run():
        span["start"] = time.perf_counter()
        work()
        span["end"] = time.perf_counter()

    thread = threading.Thread(target=run)
    ticks = []
    thread.start()
    while thread.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    thread.join()
    return span["start"], span["end"], ticks


def assert_ran_throughout(start, end, ticks, what):
    """The main thread ticked in every quarter of the native call."""
    assert end - start > 0.05, what + " took too little time to tell"
    quarter = (end - start) / 4
    for q in range(4):
        lo, hi = start + q * quarter, start + (q + 1) * quarter
        assert any(lo <= t < hi for t in ticks), "%s: no Python tick in quarter %d of %.3f s" % (what, q + 1, end - start)


def test_compile_releases_the_gil():
    # vit-tiny on the full C600: about 0.4 s of compile on one thread
    start, end, ticks = ticks_during(lambda: tilevit.compile(model="vit-tiny", machine="c600", threads=1))
    assert_ran_throughout(start, end, ticks, "compile")


def test_device_call_releases_the_gil():
    # one call of 3 ViT-B/16 layers on the C600: about 0.3 s on one thread (one native call,
    # so a GIL held through it could not tick between calls)
    program = tilevit.compile(model="vit-b16", layers=3, machine="c600", profile=None, optimization_steps=0)
    device = tilevit.Device(program, threads=1)
    start, end, ticks = ticks_during(device)
    assert_ran_throughout(start, end, ticks, "device call")


def test_progress_lines_reach_a_callable_from_the_compile_threads(monkeypatch):
    lines = []
    tilevit.compile(model="small", machine="test16", progress=lines.append)
    assert any(line.startswith("search:") for line in lines), lines

    def failing(line):
        raise RuntimeError("a progress callback that fails")
    reported = []  # a failing callback is reported as unraisable and the compile goes on
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(str(u.exc_value)))
    assert tilevit.compile(model="small", machine="test16", progress=failing).estimated_cycles > 0
    assert reported and reported[0] == "a progress callback that fails"
