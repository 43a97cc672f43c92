"""Records (lists of dicts) as pandas tables, their naming columns first."""

FIRST = ("step", "label", "key", "tile", "kind", "operation", "dims", "start", "end", "cycles")


def records(rows, as_pandas=True):
    if not as_pandas:
        return rows
    import pandas as pd
    table = pd.DataFrame.from_records(rows)
    first = [c for c in FIRST if c in table.columns]
    return table[first + [c for c in table.columns if c not in first]]
