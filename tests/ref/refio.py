"""The reference files of the C tests (tests/ref/NAME.bin, read by tests/lt_test.h's t_ref_load):
written and read here for every generator in tests/ref.

A file is a sequence of records, all little-endian: u32 name length, the name's bytes, u32 ndim,
i64 shape[ndim], then prod(shape) 4-byte words: float32 values, or raw uint32 bit patterns
(put_words) that the C side reads as float32 bits.  Integers (ids, targets) are stored as exact
floats.  A name is unique in its file and shorter than 128 bytes (t_arr.name).

Op cases (op_case, tests/ref/ops.bin and llama_ops.bin) are named KIND/LABEL/sSEED; their records
are CASE.x0..x2 (float inputs), CASE.g0..g2 (d/dx_k of loss = sum(out * R)), CASE.ids, CASE.args,
CASE.R (a random tensor shaped like out) and CASE.out.
"""
import struct

import numpy as np
import torch


class Records:
    """The records of one file, in the order they are put."""

    def __init__(self):
        self.items = []
        self.names = set()

    def __len__(self):
        return len(self.items)

    def _add(self, name, a):
        assert name not in self.names, name
        assert len(name.encode()) < 128, name
        self.names.add(name)
        self.items.append((name, a))

    def put(self, name, arr):
        """arr as float32 (a scalar becomes shape [1])."""
        a = np.ascontiguousarray(np.asarray(arr, dtype=np.float32))
        self._add(name, a.reshape(1) if a.ndim == 0 else a)

    def put_f64(self, name, values):
        """float64 values as two records NAME.hi = float32(x) and NAME.lo = float32(x - hi)."""
        x = np.asarray(values, dtype=np.float64)
        hi = x.astype(np.float32)
        lo = (x - hi.astype(np.float64)).astype(np.float32)
        self.put(name + ".hi", hi)
        self.put(name + ".lo", lo)

    def put_words(self, name, words):
        """uint32 bit patterns, one dimension, written as they are."""
        self._add(name, np.ascontiguousarray(np.asarray(words, dtype=np.uint32)).reshape(-1))

    def cases(self):
        """How many op cases were put (one CASE.out each)."""
        return sum(1 for n, _ in self.items if n.endswith(".out"))

    def write(self, path):
        write_file(path, self.items)


def write_file(path, items):
    """items: (name, array) pairs; float arrays are written as float32, uint32 ones as their words."""
    with open(path, "wb") as f:
        for name, a in items:
            nb = name.encode()
            f.write(struct.pack("<I", len(nb)) + nb + struct.pack("<I", a.ndim))
            f.write(struct.pack("<%dq" % a.ndim, *a.shape))
            f.write(a.astype("<u4" if a.dtype == np.uint32 else "<f4").tobytes())


def read_file(path):
    """{name: float32 array} of a file write_file wrote."""
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    o = 0
    while o < len(data):
        (n,) = struct.unpack_from("<I", data, o); o += 4
        name = data[o:o + n].decode(); o += n
        (nd,) = struct.unpack_from("<I", data, o); o += 4
        shape = struct.unpack_from("<%dq" % nd, data, o); o += 8 * nd
        cnt = int(np.prod(shape)) if nd else 1
        out[name] = np.frombuffer(data, dtype="<f4", count=cnt, offset=o).reshape(shape); o += 4 * cnt
    return out


def op_case(rec, kind, label, seed, fn, xs, ids=None, args=None, rng_base=10007, keep_inf=False):
    """One op case KIND/LABEL/sSEED into rec.  fn(list of float64 tensors) -> output; xs: float32
    arrays (None = absent input).  The reference is float64 arithmetic on exactly the float32
    inputs, rounded to float32 once.  R's generator is seeded from rng_base, seed and how many
    records came before, so adding cases at the end keeps the earlier ones' R."""
    cid = "%s/%s/s%d" % (kind, label, seed)
    rng = np.random.default_rng(rng_base + seed * 31 + len(rec))
    ts = [None if x is None else torch.tensor(x.astype(np.float64), requires_grad=True) for x in xs]
    out = fn(ts)
    R = rng.uniform(-1, 1, size=tuple(out.shape)).astype(np.float32)
    (out * torch.tensor(R.astype(np.float64))).sum().backward()
    o = out.detach().numpy()
    if not keep_inf:
        assert np.all(np.isfinite(o)), cid
    for k, x in enumerate(xs):
        if x is None:
            continue
        rec.put("%s.x%d" % (cid, k), x)
        g = ts[k].grad.numpy()
        assert np.all(np.isfinite(g)), cid
        rec.put("%s.g%d" % (cid, k), g)
    if ids is not None:
        rec.put(cid + ".ids", np.asarray(ids, dtype=np.float32))
    if args is not None:
        rec.put(cid + ".args", np.asarray(args, dtype=np.float32))
    rec.put(cid + ".R", R)
    rec.put(cid + ".out", o)
