#!/usr/bin/env python3
"""The fullest tile of a memory.json (tilevit memory-map) and what is live at its peak.

usage: bench/fullest_tile.py DIR/memory.json [N]

Prints the tile with the highest peak (summary.peak_bytes: program allocations only, as
compile's "SRAM peak per tile"), its peak phase, and the N largest program allocations
live in that phase (first <= phase <= last), then the reserved ranges live there, which
the peak does not count. docs/MEMORY_MAP.md gives the fields.
"""
import json
import sys


def main():
    m = json.load(open(sys.argv[1]))
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    tiles = m["tiles"]
    best = max(tiles, key=lambda t: (t["summary"]["peak_bytes"], -t["logical"]))
    s, phase = best["summary"], best["summary"]["peak_phase"]
    shown = f"stage {m['stage']} of {m['stages']}, " if "stage" in m else ""
    print(f"{shown}{m['machine']['name']}: fullest tile {best['logical']} "
          f"(P{best['physical']['row']}:{best['physical']['column']}): peak {s['peak_bytes']} B of {s['capacity']} "
          f"at phase {phase} (superstep {phase // 2}, {'exchange' if phase % 2 else 'compute'}), "
          f"free {s['free_at_peak']} B, largest hole {s['largest_hole']} B; by kind {s['bytes_by_kind']}")
    reserved = tuple(r["name"] + " " for r in m["reserved"])
    live = [e for e in best["allocations"] if e["first"] <= phase <= e["last"] and e["kind"] != "padding"]
    live.sort(key=lambda e: (-(e["payload_end"] - e["start"]), e["start"]))
    program = [e for e in live if not m["labels"][e["label"]].startswith(reserved)]
    print(f"{len(program)} program allocations live, {sum(e['payload_end'] - e['start'] for e in program)} B; "
          f"the {min(top, len(program))} largest:")
    for e in program[:top]:
        print(f"  {e['payload_end'] - e['start']:>8} B  {m['labels'][e['label']]}  "
              f"[0x{e['start']:X}, 0x{e['end']:X}) phases {e['first']}-{e['last']}")
    for e in live:
        if e not in program:
            print(f"  reserved, not in the peak: {e['payload_end'] - e['start']} B  {m['labels'][e['label']]}")


if __name__ == "__main__":
    main()
