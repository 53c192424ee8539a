# SPDX-License-Identifier: BSD-3-Clause
"""The byte work of a snapshot (seer_envs._snapshot), nogil C at memory
speed: the checksum, and packing the arrays into one bytes object.

Checksum (seer_runtime/src/checksum.h) of 64-bit words ``w_0 .. w_{n-1}``:
``s1 = sum w_i`` and ``s2 = sum (i + 1) * w_i``, both mod 2**64 (a
Fletcher-style pair: a flipped bit changes ``s1``, words that moved change
``s2``).  It detects corruption, not tampering.  A snapshot's bytes carry
two such pairs, each weighing a word by its place in the whole: one of
everything but the pending events, read when the bytes are, and one of the
events, checked as a restore copies them (their sum is the whole's).

Why C: in NumPy the weighted sum needed a chunked rows-and-columns trick and
still read the data about twice; here it is one pass in add-only lanes that
compilers vectorise.  :func:`pack` (a snapshot built by hand, or of single
copies) sums each chunk right after copying it, while it is in the cache;
an env's snapshot is written in place instead (:func:`empty`, :func:`place`,
the engine's ``export_state(out=, sums_from=)``, :func:`seal`), so its bytes
are allocated once (a fresh large buffer costs page faults) and summed as
they are written.
"""

from cpython.buffer cimport (PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE, PyBUF_WRITE, PyBuffer_Release,
                             PyObject_GetBuffer)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.memoryview cimport PyMemoryView_FromMemory
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy, memset

cdef enum:
    CHUNK = 32768       # bytes copied, then summed from the cache (a multiple of 8)


cdef extern from "src/checksum.h" nogil:
    void seer_sum64(const unsigned char* p, int64_t nwords, uint64_t first, uint64_t* s1, uint64_t* s2)


cdef inline void _sum(const unsigned char* p, Py_ssize_t nwords, uint64_t first,
                      uint64_t* s1, uint64_t* s2) noexcept nogil:
    seer_sum64(p, nwords, first, s1, s2)


cdef inline void _put(unsigned char* p, uint64_t w) noexcept nogil:
    cdef int i
    for i in range(8):              # little-endian whatever the machine
        p[i] = (w >> (8 * i)) & 0xFF


def sums(const unsigned char[::1] data, uint64_t first=0):
    """``(s1, s2)`` of ``data`` (a bytes-like object, its length a multiple
    of 8) as words ``first``, ``first + 1``, ... of a stream."""
    cdef Py_ssize_t n = data.shape[0]
    cdef uint64_t s1 = 0, s2 = 0
    if n % 8:
        raise ValueError(f"the checksum reads 8-byte words; {n} bytes is not a whole number of them")
    if n:
        with nogil:
            _sum(&data[0], n // 8, first, &s1, &s2)
    return s1, s2


cdef void _copy_sum(unsigned char* dst, const unsigned char* src, Py_ssize_t n, uint64_t first,
                    uint64_t* s1, uint64_t* s2) noexcept nogil:
    """Copy ``n`` bytes (a multiple of 8) to ``dst`` (word ``first`` of the
    output), summing them chunk by chunk from the cache."""
    cdef Py_ssize_t off = 0, m
    while off < n:
        m = n - off if n - off < CHUNK else CHUNK
        memcpy(dst + off, src + off, m)
        _sum(src + off, m // 8, first + off // 8, s1, s2)   # (loads of just-stored bytes would wait)
        off += m


def pack(bytes head, list parts, Py_ssize_t apart=-1):
    """One bytes object: ``head`` (its length a multiple of 8), each part of
    ``parts`` (C-contiguous byte buffers) padded with zeros to 8 bytes, and
    the 32-byte checksum of everything before it: ``s1``, ``s2`` of all but
    part ``apart`` (-1: none), then ``s1``, ``s2`` of that part (its
    padding included), each word weighed by its place in the whole;
    little-endian."""
    cdef Py_ssize_t total = len(head), n, pad, off, k = 0
    cdef uint64_t r1 = 0, r2 = 0, a1 = 0, a2 = 0
    cdef uint64_t* s1
    cdef uint64_t* s2
    cdef const unsigned char[::1] view
    cdef unsigned char* out
    if total % 8:
        raise ValueError("pack(): the head must be padded to 8 bytes")
    for part in parts:
        n = len(part)
        total += n + (8 - n % 8) % 8       # C division here (cdivision): no negative modulo
    res = PyBytes_FromStringAndSize(NULL, total + 32)
    out = <unsigned char*>PyBytes_AS_STRING(res)
    off = len(head)
    if off:
        _copy_sum(out, <const unsigned char*>PyBytes_AS_STRING(head), off, 0, &r1, &r2)
    for part in parts:
        if k == apart:
            s1 = &a1
            s2 = &a2
        else:
            s1 = &r1
            s2 = &r2
        k += 1
        view = part
        n = view.shape[0]
        if n == 0:
            continue
        pad = (8 - n % 8) % 8
        with nogil:
            _copy_sum(out + off, &view[0], n - n % 8, off // 8, s1, s2)
            if pad:                 # the last partial word, zero-padded
                memset(out + off + n + pad - 8, 0, 8)
                memcpy(out + off + n - n % 8, &view[n - n % 8], n % 8)
                _sum(out + off + n + pad - 8, 1, (off + n + pad) // 8 - 1, s1, s2)
        off += n + pad
    _put(out + off, r1)
    _put(out + off + 8, r2)
    _put(out + off + 16, a1)
    _put(out + off + 24, a2)
    return res


def empty(Py_ssize_t n):
    """``(b, view)``: a new bytes object of ``n`` bytes, not yet written, and
    a writable memoryview of it.  Only for :func:`seer_envs._snapshot.capture`,
    which fills it through ``view`` and :func:`seal`-s it before anyone else
    holds ``b`` (bytes are immutable once shared; ``view`` does not keep
    ``b`` alive)."""
    if n < 0:
        raise ValueError(f"empty(): n = {n} < 0")
    b = PyBytes_FromStringAndSize(NULL, n)
    return b, PyMemoryView_FromMemory(PyBytes_AS_STRING(b), n, PyBUF_WRITE)


def seal(bytes b, apart=None):
    """Write the 32-byte checksum (:func:`pack`'s) of ``b``'s bytes before
    its last 32 into them (``b`` from :func:`empty`, not yet shared).
    ``apart``: ``(lo, hi, s1, s2)``, a byte range (8-byte aligned) summed
    already, as words ``lo // 8`` on, whose sums go apart; None: none."""
    cdef Py_ssize_t n = len(b) - 32, lo = 0, hi = 0
    cdef uint64_t r1 = 0, r2 = 0, a1 = 0, a2 = 0
    cdef unsigned char* p = <unsigned char*>PyBytes_AS_STRING(b)
    if n < 0 or n % 8:
        raise ValueError("seal(): the bytes before the checksum are not whole 8-byte words")
    if apart is not None:
        lo, hi = apart[0], apart[1]
        if not 0 <= lo <= hi <= n or lo % 8 or hi % 8:
            raise ValueError(f"seal(): range {lo}..{hi} is not 8-byte aligned inside the bytes")
        a1, a2 = <uint64_t>apart[2], <uint64_t>apart[3]
    with nogil:
        _sum(p, lo // 8, 0, &r1, &r2)
        _sum(p + hi, (n - hi) // 8, hi // 8, &r1, &r2)
        _put(p + n, r1)
        _put(p + n + 8, r2)
        _put(p + n + 16, a1)
        _put(p + n + 24, a2)


def place(view, list items):
    """Into ``view`` (a writable buffer, :func:`empty`'s), for each
    ``(offset, nbytes, source)`` of ``items``: ``source``'s bytes (a
    C-contiguous buffer of ``nbytes``, or None: written later) at ``offset``,
    then zeros up to the next multiple of 8.  One C call for a snapshot's
    small arrays instead of a few NumPy calls each."""
    cdef Py_buffer out, src
    cdef Py_ssize_t off, nb, pad
    PyObject_GetBuffer(view, &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)
    try:
        for off, nb, source in items:
            pad = (8 - nb % 8) % 8
            if off < 0 or off + nb + pad > out.len:
                raise ValueError(f"place(): {nb} bytes at {off} run past the buffer's {out.len}")
            if source is not None:
                PyObject_GetBuffer(source, &src, PyBUF_C_CONTIGUOUS)
                try:
                    if src.len != nb:
                        raise ValueError(f"place(): a source of {src.len} bytes for {nb}")
                    memcpy(<char*>out.buf + off, src.buf, nb)
                finally:
                    PyBuffer_Release(&src)
            memset(<char*>out.buf + off + nb, 0, pad)
    finally:
        PyBuffer_Release(&out)
