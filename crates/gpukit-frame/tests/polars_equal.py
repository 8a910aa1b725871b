"""The Polars side of polars_equal.rs: recomputes every recorded gpukit-frame operation with
Python Polars and compares.

Usage: python polars_equal.py CASES.json

CASES.json (written by polars_equal.rs): {"frames": {name: frame}, "cases": [case]}, a frame
being {"height": n, "columns": [{"name", "dtype", "values"}]} with nulls as null, floats as
their shortest round-trip decimals and NaN/inf/-inf as strings; a case {"op", "seed",
"params", "inputs": [frame names], and "output" (a frame), "count" (a number) or "error"}.

Comparison: column names, dtypes, heights and every value, in order. Integers, strings,
booleans, dates, timestamps and nulls exactly; floats exactly except the sums, means, standard
deviations of group_by/describe and rolling sums/means (summation order differs): relative
1e-12, and absolute 1e-12 x (largest finite input magnitude x rows) for results that cancel
to near zero. The deliberate differences polars_equal.rs documents are normalised here (see
`normalise_*`). Exit status 1 and one report per mismatch when anything differs.
"""

import io
import itertools
import json
import math
import sys
from collections import Counter

import polars as pl

DTYPES = {
    "bool": pl.Boolean,
    "i32": pl.Int32,
    "i64": pl.Int64,
    "u32": pl.UInt32,
    "u64": pl.UInt64,
    "f32": pl.Float32,
    "f64": pl.Float64,
    "str": pl.String,
}
SPECIAL = {"NaN": math.nan, "inf": math.inf, "-inf": -math.inf}


def decode_float(v):
    if v is None:
        return None
    if isinstance(v, str):
        return SPECIAL[v]
    return float(v)


def series(c):
    name, dt, vals = c["name"], c["dtype"], c["values"]
    if dt in ("f32", "f64"):
        return pl.Series(name, [decode_float(v) for v in vals], DTYPES[dt])
    if dt == "date":
        return pl.Series(name, vals, pl.Int32).cast(pl.Date)
    if dt.startswith("datetime["):
        return pl.Series(name, vals, pl.Int64).cast(pl.Datetime(dt[len("datetime[") : -1]))
    return pl.Series(name, vals, DTYPES[dt], strict=True)


def frame(f):
    return pl.DataFrame([series(c) for c in f["columns"]])


# ------------------------------------------------------------------------------------------
# expressions

CMP = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def literal(df, column, v):
    if df.schema[column].is_float():
        return decode_float(v)
    return v


def expr(df, e):
    t = e[0]
    if t == "cmp":
        return CMP[e[2]](pl.col(e[1]), pl.lit(literal(df, e[1], e[3])))
    if t == "cmpcol":
        return CMP[e[2]](pl.col(e[1]), pl.col(e[3]))
    if t == "is_in":
        return pl.col(e[1]).is_in([literal(df, e[1], v) for v in e[2]])
    if t == "is_null":
        return pl.col(e[1]).is_null()
    if t == "is_not_null":
        return pl.col(e[1]).is_not_null()
    if t == "and":
        return expr(df, e[1]) & expr(df, e[2])
    if t == "or":
        return expr(df, e[1]) | expr(df, e[2])
    if t == "not":
        return ~expr(df, e[1])
    raise ValueError(f"unknown expression {e!r}")


# ------------------------------------------------------------------------------------------
# Polars' results


def agg_expr(kind, column, alias):
    if kind == "len":
        return pl.len().alias(alias)
    c = pl.col(column)
    return getattr(c, kind)().alias(alias)


def str_op(s, p):
    """Polars' `.str` expression for gpukit's StrNamespace method p["fn"] over column `s`."""
    f = p["fn"]
    c = pl.col(s).str
    if f in ("len_bytes", "len_chars", "to_uppercase", "to_lowercase"):
        return getattr(c, f)()
    if f == "contains":
        return c.contains(p["pat"], literal=True)
    if f in ("starts_with", "ends_with"):
        return getattr(c, f)(p["pat"])
    if f == "replace":
        return c.replace(p["pat"], p["to"], literal=True, n=1)
    if f == "replace_n":
        return c.replace(p["pat"], p["to"], literal=True, n=p["n"])
    if f == "replace_all":
        return c.replace_all(p["pat"], p["to"], literal=True)
    if f == "split_part":
        i = p["index"]
        return c.split_exact(p["pat"], i).struct.field(f"field_{i}").alias(s)
    if f == "slice":
        return c.slice(p["offset"], p["length"])
    raise ValueError(f"unknown str op {f}")


def in_case_table(ch):
    """Whether gpukit's case tables cover the code point (U+0000-U+017F, U+0300-U+04FF)."""
    o = ord(ch)
    return o <= 0x17F or 0x300 <= o <= 0x4FF


def normalise_case_map(df, name, upper):
    """gpukit maps case only inside its tables' ranges and copies other code points unchanged
    (treating them as neither cased nor case-ignorable for the final sigma), as str_ops/case.rs
    documents. Polars maps each run of covered characters; the other runs stay as they are."""
    runs, layout = [], []
    for v in df[name].to_list():
        if v is None:
            layout.append(None)
            continue
        parts = []
        for covered, chars in itertools.groupby(v, key=in_case_table):
            text = "".join(chars)
            if covered:
                parts.append(len(runs))
                runs.append(text)
            else:
                parts.append(text)
        layout.append(parts)
    s = pl.Series(runs, dtype=pl.String).str
    mapped = (s.to_uppercase() if upper else s.to_lowercase()).to_list()
    out = [None if p is None else "".join(mapped[x] if isinstance(x, int) else x for x in p) for p in layout]
    return pl.DataFrame([pl.Series(name, out, pl.String)])


def normalise_rolling_extreme(df, p):
    """gpukit's rolling min/max skip NaN (a window of only NaN gives NaN), as rolling/mod.rs
    documents; Polars' give NaN for any window holding a NaN. Polars' result over the column
    with NaN made null, NaN where the window had enough non-null values but no non-NaN one."""
    name, w = p["column"], p["window"]
    kw = dict(center=p["center"])
    c = pl.col(name)
    if not df.schema[name].is_float():
        return None
    stat = getattr(c.fill_nan(None), "rolling_" + p["stat"])(w, min_samples=1, **kw)
    enough = c.is_not_null().cast(pl.Int64).rolling_sum(w, min_samples=1, **kw) >= p["min_periods"]
    out = pl.when(enough).then(pl.when(stat.is_null()).then(float("nan")).otherwise(stat))
    return df.select(out.otherwise(None).cast(pl.Float64).alias(name))


def polars_result(case, frames, got):
    """Polars' result of the case (a DataFrame or an int), normalised as documented, and the
    label of the comparison."""
    op, p = case["op"], case["params"]
    df = frames[case["inputs"][0]]
    if op == "select":
        return df.select(p["columns"])
    if op == "drop":
        return df.drop(p["columns"])
    if op == "rename_all":
        return df.rename(dict(zip(df.columns, p["names"])))
    if op == "drop_in_place":
        return df.select(p["column"]) if p["part"] == "taken" else df.drop(p["column"])
    if op == "column_sort":
        return df[p["column"]].sort(descending=p["descending"], nulls_last=True).to_frame()
    if op == "rename":
        return df.rename({p["old"]: p["new"]})
    if op == "with_column":
        values = series(p["values"]["columns"][0]).alias(p["name"])
        return df.with_columns(values)
    if op == "head":
        return df.head(p["n"])
    if op == "tail":
        return df.tail(p["n"])
    if op == "slice":
        return df.slice(p["offset"], p["length"])
    if op == "take":
        return df.select(pl.all().gather(pl.Series(p["indices"], dtype=pl.Int64)))
    if op == "filter":
        return df.filter(expr(df, p["expr"]))
    if op == "sort_by":
        desc = p["descending"]
        desc = desc[0] if len(desc) == 1 else desc
        return df.sort(p["by"], descending=desc, nulls_last=p["nulls_last"], maintain_order=True)
    if op == "join":
        right = frames[case["inputs"][1]]
        return df.join(right, on=p["on"], how=p["how"], maintain_order="left")
    if op == "group_by":
        aggs = [agg_expr(*a) for a in p["aggs"]]
        out = df.group_by(p["keys"]).agg(aggs)
        # gpukit: groups sorted by key, nulls first, NaN after numbers
        out = out.sort(p["keys"], nulls_last=False, maintain_order=True)
        return normalise_dtypes(out, got)
    if op == "value_counts":
        name = p["column"]
        out = df[name].value_counts(sort=True)
        # gpukit: ties of equal counts by value ascending, nulls first
        return out.sort(["count", name], descending=[True, False], nulls_last=False, maintain_order=True)
    if op == "unique":
        return df[p["column"]].unique().sort(nulls_last=False).to_frame()
    if op == "n_unique":
        return df[p["column"]].n_unique()
    if op == "describe":
        names = [c for c in got.columns if c != "statistic"] if got is not None else []
        return df.select(names).describe()
    if op == "str":
        if p["fn"] == "split_exact":
            return df.select(pl.col("s").str.split_exact(p["pat"], p["n"])).unnest("s")
        if p["fn"] in ("to_uppercase", "to_lowercase"):
            return normalise_case_map(df, "s", p["fn"] == "to_uppercase")
        return df.select(str_op("s", p))
    if op == "rolling":
        if p["stat"] in ("min", "max"):
            out = normalise_rolling_extreme(df, p)
            if out is not None:
                return out
        c = pl.col(p["column"])
        f = getattr(c, "rolling_" + p["stat"])
        out = df.select(f(p["window"], min_samples=p["min_periods"], center=p["center"]))
        return out.cast(pl.Float64)  # gpukit: rolling results are f64 whatever the input
    if op == "rolling_spread":
        kw = dict(min_samples=p["min_periods"], center=p["center"])
        c = pl.col(p["column"])
        return df.select(c.rolling_max(p["window"], **kw) - c.rolling_min(p["window"], **kw))
    if op == "apply_rows_add_ij":
        return df.with_columns((pl.col("i") + pl.col("j").cast(pl.Int64)).alias("ij"))
    if op == "map_kernel_at_least_100":
        return df.select(pl.col("i") >= 100)
    if op == "map_array_half_plus_three":
        return df.select(pl.col("f") * 0.5 + 3.0)
    if op == "map_array_astype_f64":
        return df.select(pl.col("i").cast(pl.Float64))
    if op == "csv_roundtrip":
        # the CSV text gpukit wrote, read back by Polars, must be the input frame again; and
        # gpukit's own reading of it (the case's output) too. An empty string is written as an
        # empty field, the same as a null (io/csv.rs), so it comes back null.
        return csv_expected(df)
    raise ValueError(f"unknown op {op}")


def csv_expected(df):
    return df.with_columns(
        pl.when(pl.col(n) == "").then(None).otherwise(pl.col(n)).alias(n)
        for n, dt in df.schema.items()
        if dt == pl.String
    )


def normalise_dtypes(out, got):
    """gpukit sums i32 in 64 bits (an i64 column); Polars keeps i32. Cast Polars' integer
    columns to gpukit's wider integer type where only the width differs."""
    if got is None:
        return out
    casts = []
    for name, dt in out.schema.items():
        if name in got.schema:
            g = got.schema[name]
            if dt != g and dt.is_integer() and g.is_integer():
                casts.append(pl.col(name).cast(g))
    return out.with_columns(casts) if casts else out


# ------------------------------------------------------------------------------------------
# comparison

APPROX_OPS = {"group_by", "describe"}


def approx_column(op, params, name):
    if op == "rolling":
        return params["stat"] in ("sum", "mean")
    if op == "group_by":
        return name.endswith(("_sum", "_mean", "_std"))
    return op in APPROX_OPS


def scale_of(df):
    m = 1.0
    for s in df.iter_columns():
        if s.dtype.is_numeric() and s.len() > 0:
            v = s.cast(pl.Float64).filter(s.cast(pl.Float64).is_finite()).abs().max()
            if v is not None:
                m = max(m, v)
    return m * max(1, df.height)


def same(a, b, approx, abs_tol):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if a == b:
            return True
        return approx and math.isclose(a, b, rel_tol=1e-12, abs_tol=abs_tol)
    return type(a) is type(b) and a == b


def physical(s):
    if s.dtype == pl.Date:
        return s.cast(pl.Int32)
    if isinstance(s.dtype, pl.Datetime):
        return s.cast(pl.Int64)
    return s


def compare(got, exp, op, params, abs_tol):
    if got.columns != exp.columns:
        return [f"columns: gpukit {got.columns} != polars {exp.columns}"]
    diffs = []
    if got.height != exp.height:
        diffs.append(f"height: gpukit {got.height} != polars {exp.height}")
    for name in got.columns:
        g, e = got[name], exp[name]
        if g.dtype != e.dtype:
            diffs.append(f"column {name!r}: dtype gpukit {g.dtype} != polars {e.dtype}")
        gl, el = physical(g).to_list(), physical(e).to_list()
        approx = approx_column(op, params, name)
        bad = [r for r in range(min(len(gl), len(el))) if not same(gl[r], el[r], approx, abs_tol)]
        if bad:
            rows = "; ".join(f"row {r}: gpukit {gl[r]!r} polars {el[r]!r}" for r in bad[:6])
            diffs.append(f"column {name!r}: {len(bad)} of {len(gl)} rows differ: {rows}")
    return diffs


def check(case, frames):
    op = case["op"]
    got = frame(case["output"]) if "output" in case else None
    try:
        exp = polars_result(case, frames, got)
    except Exception as e:  # noqa: BLE001 - any Polars error is part of the comparison
        if "error" in case:
            return []  # both refuse
        return [f"Polars raised {type(e).__name__}: {e}"]
    if "error" in case:
        return [f"gpukit error {case['error']!r}, Polars gives {exp!r}"]
    if "count" in case:
        return [] if case["count"] == exp else [f"gpukit {case['count']} != polars {exp}"]
    df = frames[case["inputs"][0]]
    abs_tol = 1e-12 * scale_of(df)
    diffs = compare(got, exp, op, case["params"], abs_tol)
    if op == "csv_roundtrip":
        try:
            back = pl.read_csv(io.StringIO(case["params"]["csv"]), schema=df.schema)
            exp_back = csv_expected(df)
            diffs += ["Polars reading gpukit's CSV: " + d for d in compare(back, exp_back, op, {}, 0.0)]
        except Exception as e:  # noqa: BLE001
            diffs.append(f"Polars cannot read gpukit's CSV: {type(e).__name__}: {e}")
    return diffs


def main():
    with open(sys.argv[1], encoding="utf-8") as fh:
        doc = json.load(fh)
    frames = {k: frame(v) for k, v in doc["frames"].items()}
    ops = Counter()
    failures = 0
    for case in doc["cases"]:
        ops[case["op"]] += 1
        diffs = check(case, frames)
        if diffs:
            failures += 1
            if failures <= 40:
                params = json.dumps(case["params"], ensure_ascii=False)
                if len(params) > 300:
                    params = params[:300] + "..."
                print(f"MISMATCH {case['op']} seed={case['seed']} inputs={case['inputs']} params={params}")
                for d in diffs:
                    print("  " + (d if len(d) < 1500 else d[:1500] + "..."))
    summary = ", ".join(f"{k} {v}" for k, v in sorted(ops.items()))
    print(f"polars {pl.__version__}: {len(doc['cases'])} cases ({summary}); {failures} differ")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
